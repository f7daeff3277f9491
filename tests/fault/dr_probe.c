/*
 * dr_probe.c — the program of the dlopen-resolution tests
 * (dlopen_resolve.sh, dlopen_pass.sh): it loads libraries as the command
 * line says and prints, one line a step, which library each step got.
 *
 * Compiled by CMake into an object (dlresolve.cmake); the test scripts link
 * it themselves into programs with the RUNPATH/RPATH each case needs.  The
 * line it prints must depend only on what the loader did, so that a run
 * with libenormoustext preloaded can be compared byte for byte with a plain
 * one: identities, paths (below $DR_ROOT, written "@/"), namespaces and
 * dlerror() texts; no addresses.
 *
 * Steps (MODE: now, lazy, global, local, noload, nodelete, deepbind joined
 * with ","; NAME "-" is NULL; FN the identity function to look up, "-" for
 * none):
 *   open NAME MODE FN        dlopen from the program
 *   mopen NAME MODE FN       dlmopen(LM_ID_NEWLM) from the program (kept as
 *                            the namespace of the nsvia steps)
 *   via LIB NAME MODE FN     LIB (basename of a loaded dr_caller.c library)
 *                            calls dlopen
 *   tail LIB NAME MODE FN    LIB calls dlopen as a tail call (the return
 *                            address is then the program's)
 *   nsvia LIB NAME MODE FN   LIB, the library the last mopen loaded, calls dlopen
 *   ctor LIB FN              what LIB's constructor got (dr_ctor.c)
 *   chdir DIR
 *   huge LIB                 bytes of LIB's text windows on huge pages (LIB:
 *                            a basename, in the base or the last mopen namespace)
 *   refresh                  enormoustext_refresh(), when the library is there
 * Exit 0 unless the command line is wrong (2).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "it_text.h"

typedef void *(*dr_open_fn)(const char *, int);
typedef const char *(*dr_ident_fn)(void);

/* Called through dlopen(NULL) + dlsym: the program's own identity. */
__attribute__((visibility("default"))) const char *dr_main_ident(void)
{
	return "program";
}

static const char *root;
static void *last_ns;   /* the handle of the last mopen step */

/* path (or an error text) with every "$DR_ROOT/" written "@/". */
static const char *shown(const char *path)
{
	static char buf[8192];
	size_t n = root ? strlen(root) : 0, o = 0;
	if (!path)
		return "(null)";
	if (!path[0])
		return "(program)";
	for (const char *p = path; *p && o + 2 < sizeof buf;) {
		if (n && !strncmp(p, root, n) && p[n] == '/') {
			buf[o++] = '@';
			p += n;
		} else {
			buf[o++] = *p++;
		}
	}
	buf[o] = '\0';
	return buf;
}

static int parse_mode(const char *s)
{
	static const struct { const char *name; int bit; } bits[] = {
		{ "now", RTLD_NOW }, { "lazy", RTLD_LAZY }, { "global", RTLD_GLOBAL },
		{ "local", RTLD_LOCAL }, { "noload", RTLD_NOLOAD }, { "nodelete", RTLD_NODELETE },
#ifdef RTLD_DEEPBIND
		{ "deepbind", RTLD_DEEPBIND },
#endif
	};
	int mode = 0;
	char copy[256];
	snprintf(copy, sizeof copy, "%s", s);
	for (char *save = NULL, *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		size_t i;
		for (i = 0; i < sizeof bits / sizeof *bits; i++)
			if (!strcmp(t, bits[i].name))
				break;
		if (i == sizeof bits / sizeof *bits) {
			fprintf(stderr, "dr_probe: unknown mode word '%s'\n", t);
			exit(2);
		}
		mode |= bits[i].bit;
	}
	return mode;
}

static struct link_map *map_of(void *h)
{
	struct link_map *lm = NULL;
	if (!h || dlinfo(h, RTLD_DI_LINKMAP, &lm) != 0)
		return NULL;
	return lm;
}

#ifdef LM_ID_NEWLM
static const char *lmid_of(void *h)
{
	static char buf[32];
	Lmid_t id = -1;
	if (!h || dlinfo(h, RTLD_DI_LMID, &id) != 0)
		return "lm=?";
	if (id == LM_ID_BASE)
		return "lm=base";
	snprintf(buf, sizeof buf, "lm=%ld", (long)id);
	return buf;
}
#endif

/* One result: the identity the handle's library returns, and its path;
 * or the loader's error. */
static void report(const char *step, void *h, const char *fn, const char *extra)
{
	if (!h) {
		const char *e = dlerror();
		printf("%s: %s%s\n", step, e ? "error: " : "NULL, no error", e ? shown(e) : "");
		return;
	}
	struct link_map *lm = map_of(h);
	if (!strcmp(fn, "-")) {
		printf("%s: loaded %s%s%s\n", step, shown(lm ? lm->l_name : NULL), extra ? " " : "", extra ? extra : "");
		return;
	}
	dr_ident_fn f = (dr_ident_fn)dlsym(h, fn);
	if (!f) {
		const char *e = dlerror();
		char where[4096];
		snprintf(where, sizeof where, "%s", shown(lm ? lm->l_name : NULL));
		printf("%s: loaded %s, no %s (%s)%s%s\n", step, where, fn, e ? shown(e) : "?",
		       extra ? " " : "", extra ? extra : "");
		return;
	}
	printf("%s: \"%s\" from %s%s%s\n", step, f(), shown(lm ? lm->l_name : NULL), extra ? " " : "",
	       extra ? extra : "");
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

/* The library whose path ends in "/lib" in the list that holds lm (every
 * object of a namespace, from its head). */
static struct link_map *find_in_list(struct link_map *lm, const char *lib)
{
	while (lm && lm->l_prev)
		lm = lm->l_prev;
	for (; lm; lm = lm->l_next)
		if (lm->l_name && lm->l_name[0] && !strcmp(base_name(lm->l_name), lib))
			return lm;
	return NULL;
}

/* A loaded library of the program's namespace, by basename.  _r_debug
 * lists the base namespace without a call into the loader, which may be
 * interposed. */
static struct link_map *loaded(const char *lib)
{
	return find_in_list(_r_debug.r_map, lib);
}

/*
 * The libraries of dr_caller.c and dr_ctor.c register their functions from
 * their constructors (a link map is no dlsym handle for a library that was
 * not dlopened, and a dlopen here to get one would go through the wrapper
 * under test).  Looked up by basename, the latest first.
 */
struct dr_reg {
	char name[256];
	char kind[16];
	void *a, *b;
};
static struct dr_reg regs[64];
static unsigned nregs;

__attribute__((visibility("default"))) void dr_register(const char *path, const char *kind, void *a, void *b)
{
	if (nregs == sizeof regs / sizeof *regs || !path)
		return;
	struct dr_reg *r = &regs[nregs++];
	snprintf(r->name, sizeof r->name, "%s", base_name(path));
	snprintf(r->kind, sizeof r->kind, "%s", kind);
	r->a = a;
	r->b = b;
}

static const struct dr_reg *registered(const char *lib, const char *kind)
{
	for (unsigned i = nregs; i-- > 0;)
		if (!strcmp(regs[i].name, lib) && !strcmp(regs[i].kind, kind))
			return &regs[i];
	return NULL;
}

/* The executable segment of lm's object, from its ELF header (which the
 * first PT_LOAD maps). */
static int text_of(const struct link_map *lm, uintptr_t *lo, uintptr_t *hi)
{
	const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)lm->l_addr;
	if (!lm->l_addr)
		return 0;
	const ElfW(Phdr) *ph = (const ElfW(Phdr) *)(lm->l_addr + eh->e_phoff);
	for (int i = 0; i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && (ph[i].p_flags & PF_X)) {
			*lo = lm->l_addr + ph[i].p_vaddr;
			*hi = *lo + ph[i].p_filesz;
			return 1;
		}
	return 0;
}

static void huge_step(const char *needle)
{
	struct link_map *lm = loaded(needle);
	if (!lm && last_ns)
		lm = find_in_list(map_of(last_ns), needle);
	uintptr_t lo, hi;
	if (!lm || !text_of(lm, &lo, &hi)) {
		printf("huge %s: not loaded\n", needle);
		return;
	}
	struct it_huge r;
	if (it_huge_of(lo, hi, it_pmd_size(), &r) != 0) {
		printf("huge %s: cannot read /proc/self/smaps\n", needle);
		return;
	}
	printf("huge %s: %llu of %llu eligible bytes (anon %llu, file %llu, hugetlb %llu)\n", needle,
	       (unsigned long long)(r.anon + r.file + r.hugetlb), (unsigned long long)r.eligible,
	       (unsigned long long)r.anon, (unsigned long long)r.file, (unsigned long long)r.hugetlb);
}

static void need(int argc, char **argv, int i, int n)
{
	if (i + n > argc) {
		fprintf(stderr, "dr_probe: step '%s' needs %d arguments\n", argv[i], n - 1);
		exit(2);
	}
}

static const char *name_arg(const char *s)
{
	return strcmp(s, "-") ? s : NULL;
}

int main(int argc, char **argv)
{
	root = getenv("DR_ROOT");
	setvbuf(stdout, NULL, _IOLBF, 0);
	char step[8192];
	for (int i = 1; i < argc;) {
		const char *cmd = argv[i];
		if (!strcmp(cmd, "open") || !strcmp(cmd, "mopen")) {
			need(argc, argv, i, 4);
			snprintf(step, sizeof step, "%s %s %s", cmd, argv[i + 1], argv[i + 2]);
			const char *name = name_arg(argv[i + 1]);
			int mode = parse_mode(argv[i + 2]);
			if (cmd[0] == 'o') {
				report(step, dlopen(name, mode), argv[i + 3], NULL);
			} else {
#ifdef LM_ID_NEWLM
				void *h = dlmopen(LM_ID_NEWLM, name, mode);
				if (h)
					last_ns = h;
				report(step, h, argv[i + 3], h ? lmid_of(h) : NULL);
#else
				printf("%s: no dlmopen in this C library\n", step);
#endif
			}
			i += 4;
		} else if (!strcmp(cmd, "via") || !strcmp(cmd, "tail") || !strcmp(cmd, "nsvia")) {
			need(argc, argv, i, 5);
			snprintf(step, sizeof step, "%s %s %s %s", cmd, argv[i + 1], argv[i + 2], argv[i + 3]);
			/* nsvia: the namespace's own handle (dlmopen's), which is a
			 * dlsym handle; via/tail: what the library registered. */
			void *lib = NULL;
			dr_open_fn f = NULL;
			if (cmd[0] == 'n') {
				struct link_map *ns = map_of(last_ns);
				if (ns && ns->l_name && !strcmp(base_name(ns->l_name), argv[i + 1])) {
					lib = last_ns;
					f = (dr_open_fn)dlsym(lib, "dr_call_dlopen");
				}
			} else {
				const struct dr_reg *r = registered(argv[i + 1], "caller");
				if (r)
					f = (dr_open_fn)(cmd[0] == 't' ? r->b : r->a);
			}
			if (!f) {
				printf("%s: %s is not loaded (or is no dr_caller library)\n", step, argv[i + 1]);
			} else {
				void *h = f(name_arg(argv[i + 2]), parse_mode(argv[i + 3]));
#ifdef LM_ID_NEWLM
				char where[96] = "";
				if (cmd[0] == 'n' && h) {
					Lmid_t a = -1, b = -2;
					dlinfo(lib, RTLD_DI_LMID, &a);
					dlinfo(h, RTLD_DI_LMID, &b);
					snprintf(where, sizeof where, "%s (%s)",
					         a == b ? "in the caller's namespace" : "in ANOTHER namespace", lmid_of(h));
				}
				report(step, h, argv[i + 4], where[0] ? where : NULL);
#else
				report(step, h, argv[i + 4], NULL);
#endif
			}
			i += 5;
		} else if (!strcmp(cmd, "ctor")) {
			need(argc, argv, i, 3);
			snprintf(step, sizeof step, "ctor %s", argv[i + 1]);
			const struct dr_reg *r = registered(argv[i + 1], "ctor");
			void *(*handle)(void) = r ? (void *(*)(void))r->a : NULL;
			const char *(*error)(void) = r ? (const char *(*)(void))r->b : NULL;
			if (!handle || !error) {
				printf("%s: not loaded, or not a constructor library\n", step);
			} else {
				void *h = handle();
				if (h)
					report(step, h, argv[i + 2], "(from its constructor)");
				else
					printf("%s: error: %s (from its constructor)\n", step, shown(error()));
			}
			i += 3;
		} else if (!strcmp(cmd, "chdir")) {
			need(argc, argv, i, 2);
			printf("chdir %s: %s\n", argv[i + 1], chdir(argv[i + 1]) == 0 ? "ok" : "failed");
			i += 2;
		} else if (!strcmp(cmd, "huge")) {
			need(argc, argv, i, 2);
			huge_step(argv[i + 1]);
			i += 2;
		} else if (!strcmp(cmd, "refresh")) {
			int (*refresh)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "enormoustext_refresh");
			if (refresh)
				printf("refresh: enormoustext_refresh() = %d\n", refresh());
			else
				printf("refresh: no enormoustext_refresh in this process\n");
			i += 1;
		} else {
			fprintf(stderr, "dr_probe: unknown step '%s'\n", cmd);
			return 2;
		}
	}
	return 0;
}
