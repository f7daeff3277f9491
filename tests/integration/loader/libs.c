/*
 * libs.c — the small libraries of loader_test, one per -D:
 *   LIB_INNER    a tiny library
 *   LIB_OUTER    constructor dlopens libinner, destructor dlcloses it
 *   LIB_SLOW     constructor sleeps 0.3 s, then dlopens and dlcloses libinner
 *   LIB_SLOW2    constructor sleeps 0.3 s, then dlopens libinner
 *   LIB_BAD      6 MiB of text and an undefined symbol: dlopen(RTLD_NOW) maps
 *                it, then fails and unmaps it
 *   LIB_PLUG     found only through the program's RUNPATH
 * The directory of the libraries is in IT_LIBDIR.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#if defined(LIB_OUTER) || defined(LIB_SLOW) || defined(LIB_SLOW2)
static void *open_inner(void)
{
	char p[4096];
	snprintf(p, sizeof p, "%s/libinner.so", getenv("IT_LIBDIR") ? getenv("IT_LIBDIR") : ".");
	return dlopen(p, RTLD_NOW);
}
#endif

#ifdef LIB_INNER
int inner(void) { return 42; }
#endif

#ifdef LIB_OUTER
static void *h;
__attribute__((constructor)) static void c(void) { h = open_inner(); }
__attribute__((destructor)) static void d(void) { if (h) dlclose(h); }
#endif

#ifdef LIB_SLOW
__attribute__((constructor)) static void c(void)
{
	usleep(300000);
	void *h = open_inner();
	if (h)
		dlclose(h);
}
#endif

#ifdef LIB_SLOW2
__attribute__((constructor)) static void c(void)
{
	usleep(300000);
	open_inner();
}
#endif

#ifdef LIB_BAD
__asm__(".text\n.p2align 12\nbad_pad: .skip 6291456, 0xcc\n");
extern int et_it_this_symbol_does_not_exist(void);
int bad(void) { return et_it_this_symbol_does_not_exist(); }
#endif

#ifdef LIB_PLUG
#ifndef PLUG_VALUE
#define PLUG_VALUE 7
#endif
int plug(void) { return PLUG_VALUE; }
#endif
