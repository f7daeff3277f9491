/*
 * cc_common.h — what the concurrency programs of tests/fault share
 * (cc_fork_dlopen_api, cc_swaps, cc_dlclose_race, cc_signal_swap).
 *
 * Header-only, libc only.  It finds the library's API at run time
 * (dlsym(RTLD_DEFAULT)), so that every program runs preloaded and plainly
 * (then the API pointers are NULL and the calls are skipped); it checks
 * the generated big-text functions (bigtext.h); and it reads the process's
 * own mappings.  Nothing here may block for long or take a lock that the
 * library under test might hold: the watchdogs use only write(2), kill(2)
 * and _exit(2).
 */
#ifndef CC_COMMON_H
#define CC_COMMON_H

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bigtext.h"
#include "enormoustext.h"
#include "../lib/et_test.h"

/* ---- the library's API, if the library is in the process --------------- */
struct cc_api {
	int (*get_stats)(struct enormoustext_stats *);
	int (*object_count)(void);
	int (*get_object)(unsigned, struct enormoustext_object *);
	int (*refresh)(void);
	int (*remap_range)(const void *, size_t);
};

static inline void cc_api_find(struct cc_api *a)
{
	a->get_stats = (int (*)(struct enormoustext_stats *))dlsym(RTLD_DEFAULT, "enormoustext_get_stats");
	a->object_count = (int (*)(void))dlsym(RTLD_DEFAULT, "enormoustext_object_count");
	a->get_object = (int (*)(unsigned, struct enormoustext_object *))
		dlsym(RTLD_DEFAULT, "enormoustext_get_object");
	a->refresh = (int (*)(void))dlsym(RTLD_DEFAULT, "enormoustext_refresh");
	a->remap_range = (int (*)(const void *, size_t))dlsym(RTLD_DEFAULT, "enormoustext_remap_range");
}

/* ---- time ------------------------------------------------------------------ */
static inline double cc_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static inline void cc_sleep_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* ---- async-signal-safe output (watchdogs, handlers) ---------------------- */
static inline void cc_write_str(const char *s)
{
	size_t n = strlen(s);
	while (n > 0) {
		ssize_t w = write(STDOUT_FILENO, s, n);
		if (w <= 0) {
			if (w < 0 && errno == EINTR)
				continue;
			return;
		}
		s += w;
		n -= (size_t)w;
	}
}

/* Decimal of v into buf (at least 24 bytes); returns buf. */
static inline char *cc_u64_text(uint64_t v, char *buf)
{
	char t[24];
	int n = 0;
	do {
		t[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	for (int i = 0; i < n; i++)
		buf[i] = t[n - 1 - i];
	buf[n] = '\0';
	return buf;
}

/* ---- the big-text functions -------------------------------------------------- */
struct cc_table {
	const bt_fn *t;
	unsigned n;
};

/* The table of a loaded libbigtext.so-like object (exports bt_lib_table). */
static inline int cc_lib_table(void *h, struct cc_table *out)
{
	const bt_fn *(*table_of)(unsigned *) = (const bt_fn *(*)(unsigned *))dlsym(h, "bt_lib_table");
	out->t = NULL;
	out->n = 0;
	if (!table_of)
		return -1;
	out->t = table_of(&out->n);
	return out->t && out->n ? 0 : -1;
}

static inline uint64_t cc_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Call function i of a library table and check what it returns: 1 right. */
static inline int cc_call_lib(const struct cc_table *tb, unsigned i)
{
	uint64_t x = bt_arg(BT_OBJ_LIB, i);
	return tb->t[i](x) == bt_expect(BT_OBJ_LIB, i, x);
}

/* ---- where an object's text is: et_find_text (tests/lib/et_test.h, included
 * above), with ET_SEG_MEMSZ: the whole segment as loaded, the range the
 * programs call into and read the maps over. */

/* ---- the process's own mappings ----------------------------------------------- */
struct cc_map {
	uintptr_t lo, hi;
	char perms[8];
	unsigned long long inode;
	char path[256];
};

/* Calls fn for each line of /proc/self/maps (read with read(2), no stdio:
 * usable while other threads run anything).  Returns the number of lines,
 * -1 when the file cannot be read. */
static inline int cc_maps_each(void (*fn)(const struct cc_map *, void *), void *arg)
{
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	static __thread char buf[1 << 16];
	size_t have = 0;
	int lines = 0;
	for (;;) {
		ssize_t r = read(fd, buf + have, sizeof buf - 1 - have);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			close(fd);
			return -1;
		}
		have += (size_t)r;
		buf[have] = '\0';
		char *p = buf, *nl;
		while ((nl = memchr(p, '\n', have - (size_t)(p - buf)))) {
			*nl = '\0';
			struct cc_map m;
			memset(&m, 0, sizeof m);
			unsigned long long a, b, off, ino;
			int pathpos = 0;
			if (sscanf(p, "%llx-%llx %7s %llx %*s %llu %n", &a, &b, m.perms, &off, &ino, &pathpos) >= 5) {
				m.lo = (uintptr_t)a;
				m.hi = (uintptr_t)b;
				m.inode = ino;
				if (pathpos > 0) {
					size_t l = strlen(p + pathpos);
					if (l >= sizeof m.path)
						l = sizeof m.path - 1;
					memcpy(m.path, p + pathpos, l);
				}
				fn(&m, arg);
				lines++;
			}
			p = nl + 1;
		}
		size_t left = have - (size_t)(p - buf);
		memmove(buf, p, left);
		have = left;
		if (r == 0)
			break;
		if (have >= sizeof buf - 1)
			have = 0;   /* a line longer than the buffer: drop it */
	}
	close(fd);
	return lines;
}

/* /proc/self/pagemap entry of the page at addr (0 when unreadable). */
static inline uint64_t cc_pagemap(const void *addr)
{
	static __thread int fd = -1;
	if (fd < 0)
		fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	long pg = sysconf(_SC_PAGESIZE);
	uint64_t e = 0;
	if (pread(fd, &e, 8, (off_t)((uintptr_t)addr / (uintptr_t)pg * 8)) != 8)
		return 0;
	return e;
}

/* The PMD size, as the library reads it. */
static inline uint64_t cc_pmd_size(void)
{
	unsigned long long v = 0;
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size", "r");
	if (f) {
		if (fscanf(f, "%llu", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v ? v : 2u << 20;
}

#endif
