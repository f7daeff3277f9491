/*
 * faultrun — run a command with libenormoustext's own system calls failing.
 *
 *   faultrun [--log FILE] [--count] [--rule SPEC]... [--wx] [--retry-cap N] -- COMMAND [ARGS...]
 *
 * The command runs in a child under a seccomp filter that hands the named
 * system calls to this process (SECCOMP_RET_USER_NOTIF; the listener fd
 * comes back from the child over a socketpair, SCM_RIGHTS, before it
 * execs).  For each notification the supervisor decides whether the call is
 * the library's own, and then either fails it with the rule's errno or lets
 * it run (SECCOMP_USER_NOTIF_FLAG_CONTINUE).  Children and threads inherit
 * the filter; this process is their subreaper, so it serves them all.
 *
 * "The library's own call": the library calls libc's wrappers (mmap,
 * madvise, open, read, syscall() for perf_event_open...), so the
 * notification's instruction pointer is in libc, or in libenormoustext for
 * a raw system call.  A call is the library's when its IP is inside an
 * executable mapping of libenormoustext, or its IP is in libc and the
 * wrapper's return address points into libenormoustext.  The return
 * address is read from the task's stack (stack pointer from
 * /proc/TID/syscall, words from /proc/TID/mem) at the offset libc's
 * call-frame information gives for that IP (faultrun_cfi.c): the first
 * code pointer on the stack is not it in variadic wrappers, whose register
 * save area holds stale return addresses of earlier calls (mremap's did:
 * 5 of 6 swaps were misattributed that way).  Where libc has no such rule,
 * the first word that points into an executable mapping right after a call
 * instruction decides.  Calls libc
 * makes on its own behalf (malloc's mmap, pthread_create's stack, stdio's
 * open), and those of the loader, the program and its other libraries, are
 * not the library's.  Anonymous executable mappings (text the library has
 * moved) belong to the file-backed mapping they touch.
 *
 * SPEC:  SYSCALL[/argI=VALUE][:ERRNO[:NTH]]
 *   SYSCALL  a name from the table below (mmap, madvise, openat, ...)
 *   argI     match argument I (0-based) == VALUE: a number or names joined
 *            with '|' (MADV_COLLAPSE, MREMAP_MAYMOVE|MREMAP_FIXED, PROT_READ...)
 *   ERRNO    a name (ENOMEM, EPERM, EINVAL, EAGAIN, EINTR, EACCES, ...) or a
 *            number; without it the rule only counts
 *   NTH      fail only the NTH attributed matching call (1-based; counted
 *            across all processes of the run); 0 or absent: every one
 * The first rule that matches a call decides.  --count adds a counting rule
 * for every syscall of the table no rule names.  --retry-cap N: in the
 * "every call" mode, a thread that repeats the identical call right after
 * it failed with EINTR or EAGAIN (a retry loop, which is correct code) gets
 * it through after N failures in a row (default 8), so a retry loop ends.
 *
 * --wx adds a plain filter that kills the process (SECCOMP_RET_KILL_PROCESS)
 * on any mmap/mprotect/pkey_mprotect asking for PROT_WRITE|PROT_EXEC.
 *
 * The log (FILE, else stderr) gets, at the end, one line per rule and per
 * counted (syscall, key argument):
 *   faultrun: count NAME[KEY]: library N other N failed N
 *   faultrun: rule SPEC: library N failed N
 *   faultrun: status exited N | killed by signal N (NAME)
 * Exit status: the command's (128 + signal when a signal killed it);
 * 125 when faultrun itself cannot run it.
 *
 * --list prints the system calls it knows.  FAULTRUN_DEBUG=1 prints each
 * decision (IP, return address, verdict) on stderr.
 *
 * It never changes a call that is not the library's, and never answers for
 * a task it has not verified is still waiting (SECCOMP_IOCTL_NOTIF_ID_VALID).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "faultrun_cfi.h"

#if defined(__x86_64__)
#define FR_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define FR_ARCH AUDIT_ARCH_AARCH64
#endif

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif
#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
#ifndef MREMAP_DONTUNMAP
#define MREMAP_DONTUNMAP 4
#endif

/* ---- names ---------------------------------------------------------------- */

struct sc {
	const char *name;
	long nr;
	int key;        /* argument shown in the per-value breakdown, -1 none */
	bool changes_maps;
};

static const struct sc sc_table[] = {
	{ "mmap", SYS_mmap, -1, true },
	{ "mremap", SYS_mremap, 3, true },
	{ "mprotect", SYS_mprotect, 2, true },
	{ "pkey_mprotect", SYS_pkey_mprotect, 2, true },
	{ "madvise", SYS_madvise, 2, false },
	{ "munmap", SYS_munmap, -1, true },
#ifdef SYS_open
	{ "open", SYS_open, -1, false },
#endif
	{ "openat", SYS_openat, -1, false },
	{ "read", SYS_read, -1, false },
	{ "pread64", SYS_pread64, -1, false },
	{ "write", SYS_write, -1, false },
	{ "close", SYS_close, -1, false },
	{ "fadvise64", SYS_fadvise64, 3, false },
	{ "prctl", SYS_prctl, 0, false },
	{ "process_madvise", 440, 3, false },
	{ "memfd_create", SYS_memfd_create, -1, false },
	{ "perf_event_open", SYS_perf_event_open, -1, false },
	{ "timer_create", SYS_timer_create, 0, false },
	{ "timer_settime", SYS_timer_settime, -1, false },
	{ "rt_sigaction", SYS_rt_sigaction, 0, false },
	{ "ioctl", SYS_ioctl, 1, false },
	{ "unshare", SYS_unshare, 0, false },
	{ "close_range", 436, -1, false },
	{ "pidfd_open", 434, -1, false },
	{ "pidfd_getfd", 438, -1, false },
	{ "getdents64", SYS_getdents64, -1, false },
	{ "fstatfs", SYS_fstatfs, -1, false },
	{ "cachestat", 451, -1, false },
};
#define N_SC (sizeof sc_table / sizeof sc_table[0])

struct sym {
	const char *name;
	uint64_t v;
};

static const struct sym syms[] = {
	{ "MADV_NORMAL", MADV_NORMAL }, { "MADV_RANDOM", MADV_RANDOM },
	{ "MADV_SEQUENTIAL", MADV_SEQUENTIAL }, { "MADV_WILLNEED", MADV_WILLNEED },
	{ "MADV_DONTNEED", MADV_DONTNEED }, { "MADV_FREE", MADV_FREE },
	{ "MADV_REMOVE", MADV_REMOVE }, { "MADV_DONTFORK", MADV_DONTFORK },
	{ "MADV_DOFORK", MADV_DOFORK }, { "MADV_MERGEABLE", MADV_MERGEABLE },
	{ "MADV_UNMERGEABLE", MADV_UNMERGEABLE }, { "MADV_HUGEPAGE", MADV_HUGEPAGE },
	{ "MADV_NOHUGEPAGE", MADV_NOHUGEPAGE }, { "MADV_DONTDUMP", MADV_DONTDUMP },
	{ "MADV_DODUMP", MADV_DODUMP }, { "MADV_COLD", 20 }, { "MADV_PAGEOUT", 21 },
	{ "MADV_POPULATE_READ", MADV_POPULATE_READ }, { "MADV_POPULATE_WRITE", MADV_POPULATE_WRITE },
	{ "MADV_COLLAPSE", MADV_COLLAPSE },
	{ "MREMAP_MAYMOVE", MREMAP_MAYMOVE }, { "MREMAP_FIXED", MREMAP_FIXED },
	{ "MREMAP_DONTUNMAP", MREMAP_DONTUNMAP },
	{ "PROT_NONE", PROT_NONE }, { "PROT_READ", PROT_READ }, { "PROT_WRITE", PROT_WRITE },
	{ "PROT_EXEC", PROT_EXEC },
	{ "PR_SET_THP_DISABLE", 41 }, { "PR_GET_THP_DISABLE", 42 }, { "PR_SET_VMA", 0x53564d41 },
	{ "PR_SET_NAME", 15 }, { "PR_GET_NAME", 16 },
};

struct errname {
	const char *name;
	int e;
};

static const struct errname errnames[] = {
	{ "EPERM", EPERM }, { "ENOENT", ENOENT }, { "EINTR", EINTR }, { "EIO", EIO },
	{ "EBADF", EBADF }, { "EAGAIN", EAGAIN }, { "ENOMEM", ENOMEM }, { "EACCES", EACCES },
	{ "EFAULT", EFAULT }, { "EBUSY", EBUSY }, { "EEXIST", EEXIST }, { "EINVAL", EINVAL },
	{ "ENFILE", ENFILE }, { "EMFILE", EMFILE }, { "ENOSPC", ENOSPC }, { "ENOSYS", ENOSYS },
	{ "EOPNOTSUPP", EOPNOTSUPP }, { "ENODEV", ENODEV }, { "EOVERFLOW", EOVERFLOW },
};

static const struct sc *sc_by_name(const char *s, size_t n)
{
	for (size_t i = 0; i < N_SC; i++)
		if (strlen(sc_table[i].name) == n && !strncmp(sc_table[i].name, s, n))
			return &sc_table[i];
	return NULL;
}

static const struct sc *sc_by_nr(long nr)
{
	for (size_t i = 0; i < N_SC; i++)
		if (sc_table[i].nr == nr)
			return &sc_table[i];
	return NULL;
}

static int parse_value(const char *s, uint64_t *out)
{
	uint64_t v = 0;
	char buf[256];

	if (strlen(s) >= sizeof buf)
		return -1;
	strcpy(buf, s);
	for (char *save = NULL, *t = strtok_r(buf, "|", &save); t; t = strtok_r(NULL, "|", &save)) {
		char *end;
		unsigned long long n;
		size_t i;

		errno = 0;
		n = strtoull(t, &end, 0);
		if (!errno && end != t && !*end) {
			v |= n;
			continue;
		}
		for (i = 0; i < sizeof syms / sizeof syms[0]; i++)
			if (!strcmp(syms[i].name, t))
				break;
		if (i == sizeof syms / sizeof syms[0])
			return -1;
		v |= syms[i].v;
	}
	*out = v;
	return 0;
}

static int parse_errno(const char *s)
{
	char *end;
	long n = strtol(s, &end, 0);

	if (end != s && !*end && n > 0 && n < 4096)
		return (int)n;
	for (size_t i = 0; i < sizeof errnames / sizeof errnames[0]; i++)
		if (!strcmp(errnames[i].name, s))
			return errnames[i].e;
	return -1;
}

static const char *errno_name(int e)
{
	static char b[16];

	for (size_t i = 0; i < sizeof errnames / sizeof errnames[0]; i++)
		if (errnames[i].e == e)
			return errnames[i].name;
	snprintf(b, sizeof b, "%d", e);
	return b;
}

/* The key argument of a call, by name where the table has one. */
static void key_text(const struct sc *s, uint64_t v, char *out, size_t n)
{
	const char *pfx = !strcmp(s->name, "madvise") ? "MADV_" : !strcmp(s->name, "prctl") ? "PR_" : NULL;

	if (pfx) {
		for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++)
			if (syms[i].v == v && !strncmp(syms[i].name, pfx, strlen(pfx))) {
				snprintf(out, n, "%s", syms[i].name);
				return;
			}
	}
	if (!strcmp(s->name, "mremap")) {
		snprintf(out, n, "%s%s%s%s", v & MREMAP_MAYMOVE ? "MAYMOVE" : "",
			 (v & MREMAP_FIXED) ? (v & MREMAP_MAYMOVE ? "|FIXED" : "FIXED") : "",
			 (v & MREMAP_DONTUNMAP) ? "|DONTUNMAP" : "", v == 0 ? "0" : "");
		return;
	}
	snprintf(out, n, "%#" PRIx64, v);
}

/* ---- rules and tallies ------------------------------------------------------ */

struct rule {
	char spec[128];
	const struct sc *sc;
	int argi;               /* -1: any */
	uint64_t argv;
	int err;                /* 0: count only */
	unsigned long nth;      /* 0: every */
	unsigned long seen;     /* attributed matching calls */
	unsigned long failed;
};

#define MAX_RULES 64
static struct rule rules[MAX_RULES];
static int n_rules;

struct tally {
	const struct sc *sc;
	bool keyed;
	uint64_t key;
	unsigned long lib, other, failed;
};

#define MAX_TALLY 512
static struct tally tallies[MAX_TALLY];
static int n_tallies;

static struct tally *tally_of(const struct sc *s, const uint64_t *args)
{
	bool keyed = s->key >= 0;
	uint64_t key = keyed ? args[s->key] : 0;

	if (keyed && !strcmp(s->name, "ioctl"))
		key &= 0xffffffffu;
	for (int i = 0; i < n_tallies; i++)
		if (tallies[i].sc == s && tallies[i].keyed == keyed && tallies[i].key == key)
			return &tallies[i];
	if (n_tallies == MAX_TALLY)
		return NULL;
	tallies[n_tallies] = (struct tally){ .sc = s, .keyed = keyed, .key = key };
	return &tallies[n_tallies++];
}

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("faultrun: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(125);
}

static void add_rule(const char *spec)
{
	struct rule *r;
	char buf[128], *p, *colon;

	if (n_rules == MAX_RULES)
		die("too many rules");
	if (strlen(spec) >= sizeof buf)
		die("rule too long: %s", spec);
	r = &rules[n_rules];
	memset(r, 0, sizeof *r);
	snprintf(r->spec, sizeof r->spec, "%s", spec);
	strcpy(buf, spec);
	r->argi = -1;
	colon = strchr(buf, ':');
	if (colon)
		*colon++ = 0;
	p = strchr(buf, '/');
	if (p) {
		unsigned idx;
		int pos = 0;

		*p++ = 0;
		if (sscanf(p, "arg%u=%n", &idx, &pos) != 1 || pos == 0 || idx > 5 || parse_value(p + pos, &r->argv))
			die("bad argument match '%s' in rule '%s' (argI=VALUE, I 0..5)", p, spec);
		r->argi = (int)idx;
	}
	r->sc = sc_by_name(buf, strlen(buf));
	if (!r->sc)
		die("unknown system call '%s' in rule '%s'", buf, spec);
	if (colon) {
		char *nth = strchr(colon, ':');

		if (nth)
			*nth++ = 0;
		if ((r->err = parse_errno(colon)) < 0)
			die("unknown errno '%s' in rule '%s'", colon, spec);
		if (nth) {
			char *end;
			r->nth = strtoul(nth, &end, 10);
			if (end == nth || *end)
				die("bad NTH '%s' in rule '%s'", nth, spec);
		}
	}
	n_rules++;
}

/* ---- what a task's address space holds ----------------------------------------- */

enum kind { K_NONE, K_DATA, K_EXEC, K_LIBC, K_LIB };

struct map {
	uintptr_t lo, hi;
	uintptr_t bias;         /* libc's: load address minus virtual address */
	unsigned char kind;
};

struct task {
	pid_t tid;
	bool valid;             /* maps loaded and not known stale */
	struct map *maps;
	size_t n, cap;
	char libc[512];         /* libc's file, for its call-frame information */
	unsigned long last_use;
	/* the last call failed for this thread, for the retry cap */
	long last_nr;
	uint64_t last_args[6];
	unsigned streak;
};

#define MAX_TASKS 256
static struct task tasks[MAX_TASKS];
static unsigned long use_clock;

static bool is_libc(const char *base)
{
	return !strncmp(base, "libc.so", 7) || !strncmp(base, "libc-", 5) || !strncmp(base, "ld-musl-", 8) ||
	       !strncmp(base, "libc.musl-", 10);
}

static bool is_lib(const char *base)
{
	return !strncmp(base, "libenormoustext", 15);
}

static char *slurp(const char *path, size_t *len_out)
{
	size_t cap = 1 << 16, len = 0;
	char *buf = malloc(cap);
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (!buf || fd < 0) {
		free(buf);
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	for (;;) {
		ssize_t r;

		if (cap - len < 4096) {
			char *nb = realloc(buf, cap * 2);
			if (!nb)
				break;
			buf = nb;
			cap *= 2;
		}
		r = read(fd, buf + len, cap - len - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		len += (size_t)r;
	}
	close(fd);
	buf[len] = 0;
	if (len_out)
		*len_out = len;
	return buf;
}

static bool load_maps(struct task *t)
{
	char path[64];
	char *text, *line, *save = NULL;
	/* kinds of the file-backed neighbours, to name anonymous text by */
	unsigned char *file_kind;
	bool *anon_exec;
	size_t i;

	snprintf(path, sizeof path, "/proc/%d/maps", (int)t->tid);
	text = slurp(path, NULL);
	t->n = 0;
	t->valid = false;
	if (!text)
		return false;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned long lo, hi, off;
		char perms[8];
		int pos = 0;
		const char *p, *base;
		struct map *m;

		if (sscanf(line, "%lx-%lx %7s %lx %*s %*s %n", &lo, &hi, perms, &off, &pos) < 4)
			continue;
		if (t->n == t->cap) {
			size_t nc = t->cap ? t->cap * 2 : 256;
			struct map *nm = realloc(t->maps, nc * sizeof *nm);
			if (!nm)
				break;
			t->maps = nm;
			t->cap = nc;
		}
		p = pos ? line + pos : "";
		base = strrchr(p, '/');
		base = base ? base + 1 : p;
		m = &t->maps[t->n++];
		m->lo = lo;
		m->hi = hi;
		/* low 3 bits: the kind if executable; bit 3: executable; bits 4-6: the
		 * file's kind (libc/lib/other) for naming anonymous neighbours;
		 * bit 7: anonymous */
		unsigned char fk = *p == '/' ? (is_lib(base) ? K_LIB : is_libc(base) ? K_LIBC : K_EXEC) : K_NONE;
		m->kind = (unsigned char)((perms[2] == 'x' ? 8 : 0) | (fk << 4) | (*p ? 0 : 0x80));
		m->bias = 0;
		if (fk == K_LIBC && perms[2] == 'x') {
			uint64_t v;
			if (!t->libc[0] && strlen(p) < sizeof t->libc)
				strcpy(t->libc, p);
			if (!strcmp(p, t->libc) && fr_cfi_vaddr_of_offset(p, off, &v))
				m->bias = lo - (uintptr_t)v;
		}
	}
	free(text);
	/* Resolve kinds: file-backed text by its file; anonymous text (moved
	 * windows) by the file-backed mappings it touches, through runs of
	 * adjacent anonymous text. */
	file_kind = calloc(t->n + 1, 1);
	anon_exec = calloc(t->n + 1, sizeof *anon_exec);
	if (!file_kind || !anon_exec) {
		free(file_kind);
		free(anon_exec);
		return false;
	}
	for (i = 0; i < t->n; i++) {
		file_kind[i] = (unsigned char)((t->maps[i].kind >> 4) & 7);
		anon_exec[i] = (t->maps[i].kind & 0x80) && (t->maps[i].kind & 8);
	}
	for (int pass = 0; pass < 2; pass++) {
		for (size_t k = 0; k < t->n; k++) {
			size_t j = pass == 0 ? k : t->n - 1 - k;
			size_t nb = pass == 0 ? j - 1 : j + 1;

			if (!anon_exec[j] || file_kind[j] != K_NONE)
				continue;
			if ((pass == 0 && j == 0) || (pass == 1 && j + 1 >= t->n))
				continue;
			bool adjacent = pass == 0 ? t->maps[nb].hi == t->maps[j].lo : t->maps[nb].lo == t->maps[j].hi;
			if (adjacent && (file_kind[nb] == K_LIB || file_kind[nb] == K_LIBC))
				file_kind[j] = file_kind[nb];
		}
	}
	for (i = 0; i < t->n; i++) {
		struct map *m = &t->maps[i];

		if (!(m->kind & 8))
			m->kind = K_DATA;
		else if (file_kind[i] == K_LIB || file_kind[i] == K_LIBC)
			m->kind = file_kind[i];
		else
			m->kind = K_EXEC;
	}
	free(file_kind);
	free(anon_exec);
	t->valid = true;
	return true;
}

static const struct map *map_at(const struct task *t, uintptr_t a)
{
	size_t lo = 0, hi = t->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (a < t->maps[mid].lo)
			hi = mid;
		else if (a >= t->maps[mid].hi)
			lo = mid + 1;
		else
			return &t->maps[mid];
	}
	return NULL;
}

static enum kind kind_at(const struct task *t, uintptr_t a)
{
	size_t lo = 0, hi = t->n;

	/* /proc/PID/maps is sorted by address */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (a < t->maps[mid].lo)
			hi = mid;
		else if (a >= t->maps[mid].hi)
			lo = mid + 1;
		else
			return (enum kind)t->maps[mid].kind;
	}
	return K_NONE;
}

static struct task *task_of(pid_t tid)
{
	struct task *free_slot = NULL, *oldest = &tasks[0];

	use_clock++;
	for (int i = 0; i < MAX_TASKS; i++) {
		if (tasks[i].tid == tid) {
			tasks[i].last_use = use_clock;
			return &tasks[i];
		}
		if (!tasks[i].tid && !free_slot)
			free_slot = &tasks[i];
		if (tasks[i].last_use < oldest->last_use)
			oldest = &tasks[i];
	}
	struct task *t = free_slot ? free_slot : oldest;
	t->tid = tid;
	t->valid = false;
	t->n = 0;
	t->libc[0] = 0;
	t->last_use = use_clock;
	t->last_nr = -1;
	t->streak = 0;
	return t;
}

static void invalidate_all(void)
{
	for (int i = 0; i < MAX_TASKS; i++)
		tasks[i].valid = false;
}

/* The stack pointer of a task waiting in a system call. */
static bool task_sp(pid_t tid, uintptr_t *sp)
{
	char path[64], *text;
	unsigned long long v[9];
	long nr;

	snprintf(path, sizeof path, "/proc/%d/syscall", (int)tid);
	text = slurp(path, NULL);
	if (!text)
		return false;
	int n = sscanf(text, "%ld %llx %llx %llx %llx %llx %llx %llx %llx", &nr, &v[0], &v[1], &v[2], &v[3], &v[4],
		       &v[5], &v[6], &v[7]);
	free(text);
	if (n != 9)
		return false;
	*sp = (uintptr_t)v[6];
	return true;
}

#define STACK_WORDS 24

/* FAULTRUN_DEBUG=1: one line per decision on stderr (what the scan saw). */
static bool debug;

/* Is A a return address: does a call instruction end right before it?  A
 * wrapper's stack holds more than its return address: a variadic one
 * (mremap, open, prctl) spills its register arguments there, and an
 * argument can point into text (mremap's new address is the window being
 * replaced).  x86-64: call rel32, and call through a register or memory
 * (FF /2, with or without REX, ModRM forms of 2 to 7 bytes). */
static bool is_return_address(int memfd, uintptr_t a)
{
#if defined(__x86_64__)
	unsigned char b[8];

	if (a < 8 || pread(memfd, b, sizeof b, (off_t)(a - 8)) != (ssize_t)sizeof b)
		return false;
	if (b[3] == 0xe8)
		return true;
	for (int len = 2; len <= 7; len++) {
		unsigned char op = b[8 - len], m = b[8 - len + 1];
		int mod = m >> 6, rm = m & 7, need;

		if (op != 0xff || ((m >> 3) & 7) != 2)
			continue;
		if (mod == 3)
			need = 2;
		else if (mod == 0 && rm == 5)
			need = 6;                       /* disp32(%rip) */
		else if (mod == 0 && rm == 4)
			need = (b[8 - len + 2] & 7) == 5 ? 7 : 3; /* SIB, maybe disp32 */
		else if (mod == 0)
			need = 2;
		else if (mod == 1)
			need = rm == 4 ? 4 : 3;
		else
			need = rm == 4 ? 7 : 6;
		if (need == len)
			return true;
	}
	return false;
#else
	(void)memfd;
	(void)a;
	return true;
#endif
}

/* 1: the library's call; 0: someone else's. */
static int attribute(struct task *t, uintptr_t ip)
{
	enum kind k;
	uintptr_t sp, words[STACK_WORDS];
	char path[64];
	ssize_t got;
	int fd;
	bool reloaded = false;

	if (!t->valid) {
		load_maps(t);
		reloaded = true;
	}
	k = kind_at(t, ip);
	if (k < K_EXEC && !reloaded) {
		load_maps(t);
		reloaded = true;
		k = kind_at(t, ip);
	}
	if (k == K_LIB)
		return 1;
	if (k != K_LIBC)
		return 0;
	if (!task_sp(t->tid, &sp))
		return 0;
	snprintf(path, sizeof path, "/proc/%d/mem", (int)t->tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	/* the wrapper's own frame, from libc's call-frame information */
	const struct map *m = map_at(t, ip);
	int64_t ra_off;
	if (m && m->bias && t->libc[0] && fr_cfi_ra_offset(t->libc, ip - m->bias, &ra_off) && ra_off >= 0 &&
	    ra_off < 4096) {
		uintptr_t ra;
		got = pread(fd, &ra, sizeof ra, (off_t)(sp + (uintptr_t)ra_off));
		if (got == (ssize_t)sizeof ra) {
			k = kind_at(t, ra);
			if (k == K_NONE && !reloaded) {
				load_maps(t);
				k = kind_at(t, ra);
			}
			if (debug)
				fprintf(stderr, "faultrun: debug: tid %d return address at sp+%lld: %#lx kind %d\n",
					(int)t->tid, (long long)ra_off, (unsigned long)ra, (int)k);
			close(fd);
			return k == K_LIB;
		}
	}
	/* no rule for this code: the first return address on the stack */
	got = pread(fd, words, sizeof words, (off_t)sp);
	if (got <= 0) {
		close(fd);
		return 0;
	}
	for (size_t i = 0; i < (size_t)got / sizeof words[0]; i++) {
		k = kind_at(t, words[i]);
		if (debug && k >= K_EXEC)
			fprintf(stderr, "faultrun: debug: tid %d sp+%zu %#lx kind %d ret %d\n", (int)t->tid, i * 8,
				(unsigned long)words[i], (int)k, (int)is_return_address(fd, words[i]));
		if (k == K_NONE && !reloaded && words[i] >= 0x10000 && words[i] < ((uintptr_t)1 << 47)) {
			/* a pointer into something mapped since the maps were read? */
			load_maps(t);
			reloaded = true;
			k = kind_at(t, words[i]);
		}
		if (k >= K_EXEC && is_return_address(fd, words[i])) {
			close(fd);
			return k == K_LIB;
		}
	}
	close(fd);
	return 0;
}

/* ---- the filters ----------------------------------------------------------------- */

static int install_notify_filter(void)
{
	long nrs[N_SC + 4];
	int n = 0;
	struct sock_filter f[8 + N_SC + 4];
	int k = 0;

	for (int i = 0; i < n_rules; i++) {
		bool dup = false;
		for (int j = 0; j < n; j++)
			dup |= nrs[j] == rules[i].sc->nr;
		if (!dup)
			nrs[n++] = rules[i].sc->nr;
	}
	/* exec replaces the address space: the supervisor forgets what it knew */
	nrs[n++] = SYS_execve;
	nrs[n++] = SYS_execveat;
	f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
	f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, FR_ARCH, 1, 0);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
	for (int i = 0; i < n; i++)
		f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)nrs[i],
						      (unsigned char)(n - i), 0);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF);
	struct sock_fprog prog = { (unsigned short)k, f };
	return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
}

/* Kill on PROT_WRITE|PROT_EXEC asked together (mmap, mprotect, pkey_mprotect:
 * the protection is argument 2 of each). */
static int install_wx_filter(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, FR_ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_mmap, 3, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_mprotect, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_pkey_mprotect, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		/* the low 32 bits of args[2] (little-endian) */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2])),
		BPF_STMT(BPF_ALU | BPF_AND | BPF_K, PROT_WRITE | PROT_EXEC),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, PROT_WRITE | PROT_EXEC, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { (unsigned short)(sizeof f / sizeof f[0]), f };
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0);
}

static int send_fd(int sock, int fd)
{
	char c = 'F';
	struct iovec iov = { &c, 1 };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf };
	struct cmsghdr *c0 = CMSG_FIRSTHDR(&msg);

	memset(u.buf, 0, sizeof u.buf);
	c0->cmsg_level = SOL_SOCKET;
	c0->cmsg_type = SCM_RIGHTS;
	c0->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c0), &fd, sizeof fd);
	return sendmsg(sock, &msg, 0) == 1 ? 0 : -1;
}

static int recv_fd(int sock)
{
	char c;
	struct iovec iov = { &c, 1 };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf };
	struct cmsghdr *c0;
	int fd;
	ssize_t r;

	do
		r = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
	while (r < 0 && errno == EINTR);
	if (r != 1)
		return -1;
	c0 = CMSG_FIRSTHDR(&msg);
	if (!c0 || c0->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(c0), sizeof fd);
	return fd;
}

/* ---- the supervisor ---------------------------------------------------------------- */

static unsigned retry_cap = 8;

/* Decide one notification: fills the response. */
static void decide(const struct seccomp_notif *req, struct seccomp_notif_resp *resp, int listener,
		   struct rule **hit_rule, struct tally **hit_tally, bool *hit_mine)
{
	const struct sc *s = sc_by_nr(req->data.nr);
	struct task *t;
	int mine;

	resp->id = req->id;
	resp->val = 0;
	resp->error = 0;
	resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
	*hit_rule = NULL;
	*hit_tally = NULL;
	*hit_mine = false;
	if (req->data.nr == SYS_execve || req->data.nr == SYS_execveat) {
		invalidate_all();
		return;
	}
	if (!s)
		return;
	t = task_of((pid_t)req->pid);
	mine = attribute(t, (uintptr_t)req->data.instruction_pointer);
	if (debug)
		fprintf(stderr, "faultrun: debug: tid %d %s ip %#llx -> %s\n", (int)t->tid, s->name,
			(unsigned long long)req->data.instruction_pointer, mine ? "library" : "other");
	/* what was read belongs to this very task, still waiting in this call */
	if (ioctl(listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &req->id) != 0)
		return;
	if (s->changes_maps)
		t->valid = false;
	struct tally *ty = tally_of(s, (const uint64_t *)req->data.args);
	*hit_tally = ty;
	*hit_mine = mine;
	if (!mine) {
		if (ty)
			ty->other++;
		return;
	}
	if (ty)
		ty->lib++;
	for (int i = 0; i < n_rules; i++) {
		struct rule *r = &rules[i];

		if (r->sc != s || (r->argi >= 0 && req->data.args[r->argi] != r->argv))
			continue;
		r->seen++;
		*hit_rule = r;
		if (!r->err)
			return;
		if (r->nth && r->seen != r->nth)
			return;
		if (!r->nth && (r->err == EINTR || r->err == EAGAIN)) {
			bool same = t->last_nr == req->data.nr &&
				    !memcmp(t->last_args, req->data.args, sizeof t->last_args);
			if (same && ++t->streak >= retry_cap) {
				t->streak = 0;
				t->last_nr = -1;
				return;     /* a retry loop: let this one through */
			}
			if (!same)
				t->streak = 0;
			t->last_nr = req->data.nr;
			memcpy(t->last_args, req->data.args, sizeof t->last_args);
		}
		resp->flags = 0;
		resp->error = -r->err;
		resp->val = -1;
		return;
	}
}

static const char *signame(int sig)
{
	switch (sig) {
	case SIGSEGV: return "SIGSEGV";
	case SIGBUS: return "SIGBUS";
	case SIGABRT: return "SIGABRT";
	case SIGSYS: return "SIGSYS";
	case SIGKILL: return "SIGKILL";
	case SIGILL: return "SIGILL";
	case SIGFPE: return "SIGFPE";
	case SIGTERM: return "SIGTERM";
	case SIGPROF: return "SIGPROF";
	default: return "?";
	}
}

int main(int argc, char **argv)
{
	const char *log_path = NULL;
	bool count = false, wx = false;
	int i;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--")) {
			i++;
			break;
		} else if (!strcmp(a, "--log") && i + 1 < argc) {
			log_path = argv[++i];
		} else if (!strcmp(a, "--rule") && i + 1 < argc) {
			add_rule(argv[++i]);
		} else if (!strcmp(a, "--count")) {
			count = true;
		} else if (!strcmp(a, "--wx")) {
			wx = true;
		} else if (!strcmp(a, "--retry-cap") && i + 1 < argc) {
			retry_cap = (unsigned)strtoul(argv[++i], NULL, 10);
		} else if (!strcmp(a, "--list")) {
			for (size_t k = 0; k < N_SC; k++)
				printf("%s\n", sc_table[k].name);
			return 0;
		} else {
			fprintf(stderr, "usage: faultrun [--log FILE] [--count] [--rule SYSCALL[/argI=V][:ERRNO[:NTH]]]... "
					"[--wx] [--retry-cap N] -- COMMAND [ARGS...]\n");
			return 125;
		}
	}
	if (i >= argc)
		die("no command given");
#ifndef FR_ARCH
	die("no seccomp architecture constant for this machine");
#else
	if (count)
		for (size_t k = 0; k < N_SC; k++) {
			bool named = false;
			for (int j = 0; j < n_rules; j++)
				named |= rules[j].sc == &sc_table[k];
			if (!named)
				add_rule(sc_table[k].name);
		}
	debug = getenv("FAULTRUN_DEBUG") && !strcmp(getenv("FAULTRUN_DEBUG"), "1");
	FILE *log = stderr;
	if (log_path && !(log = fopen(log_path, "we")))
		die("%s: %s", log_path, strerror(errno));

	int sv[2];
	sigset_t chld;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
		die("socketpair: %s", strerror(errno));
	/* orphaned grandchildren come back here, so their status is reaped and
	 * the filter's last user goes */
	prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	sigprocmask(SIG_BLOCK, &chld, NULL);
	fflush(NULL);
	pid_t child = fork();
	if (child < 0)
		die("fork: %s", strerror(errno));
	if (child == 0) {
		sigprocmask(SIG_UNBLOCK, &chld, NULL);
		close(sv[0]);
		/* if faultrun dies (a test's timeout kills it), the command goes
		 * too: a hung command must not live on, unsupervised */
		(void)prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
			fprintf(stderr, "faultrun: PR_SET_NO_NEW_PRIVS: %s\n", strerror(errno));
			_exit(125);
		}
		if (wx && install_wx_filter() != 0) {
			fprintf(stderr, "faultrun: the W+X filter: %s\n", strerror(errno));
			_exit(125);
		}
		int lfd = -1;
		if (n_rules) {
			lfd = install_notify_filter();
			if (lfd < 0) {
				fprintf(stderr, "faultrun: seccomp(SECCOMP_FILTER_FLAG_NEW_LISTENER): %s\n", strerror(errno));
				_exit(125);
			}
		}
		/* the supervisor must hold the listener before the first notified
		 * call (the exec's loader maps the program's libraries) */
		if (send_fd(sv[1], lfd >= 0 ? lfd : sv[1]) != 0) {
			fprintf(stderr, "faultrun: sending the listener: %s\n", strerror(errno));
			_exit(125);
		}
		if (lfd >= 0)
			close(lfd);
		char ack;
		if (read(sv[1], &ack, 1) != 1)
			_exit(125);
		close(sv[1]);
		execvp(argv[i], argv + i);
		fprintf(stderr, "faultrun: %s: %s\n", argv[i], strerror(errno));
		_exit(127);
	}
	close(sv[1]);
	int listener = recv_fd(sv[0]);
	if (listener < 0)
		die("no listener from the child");
	if (!n_rules) {
		close(listener);
		listener = -1;
	}
	if (write(sv[0], "g", 1) != 1)
		die("cannot start the child");
	close(sv[0]);
	int sfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sfd < 0)
		die("signalfd: %s", strerror(errno));

	struct seccomp_notif_sizes sizes;
	if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes) != 0)
		die("SECCOMP_GET_NOTIF_SIZES: %s", strerror(errno));
	size_t req_sz = sizes.seccomp_notif > sizeof(struct seccomp_notif) ? sizes.seccomp_notif : sizeof(struct seccomp_notif);
	size_t resp_sz = sizes.seccomp_notif_resp > sizeof(struct seccomp_notif_resp) ? sizes.seccomp_notif_resp
										      : sizeof(struct seccomp_notif_resp);
	struct seccomp_notif *req = malloc(req_sz);
	struct seccomp_notif_resp *resp = malloc(resp_sz);
	if (!req || !resp)
		die("out of memory");

	int status = 0;
	bool child_done = false, hup = listener < 0;
	for (;;) {
		struct pollfd pf[2] = { { sfd, POLLIN, 0 }, { listener, POLLIN, 0 } };
		int np = listener >= 0 && !hup ? 2 : 1;

		if (child_done && hup)
			break;
		if (poll(pf, (nfds_t)np, child_done ? 100 : -1) < 0) {
			if (errno == EINTR)
				continue;
			die("poll: %s", strerror(errno));
		}
		if (pf[0].revents & POLLIN) {
			struct signalfd_siginfo si;
			while (read(sfd, &si, sizeof si) == sizeof si)
				;
		}
		for (;;) {
			int st;
			pid_t w = waitpid(-1, &st, WNOHANG | __WALL);
			if (w <= 0) {
				/* no child left at all: nobody can wait on the filter */
				if (w < 0 && errno == ECHILD && child_done)
					hup = true;
				break;
			}
			if (w == child) {
				status = st;
				child_done = true;
			}
		}
		if (np == 2 && (pf[1].revents & (POLLHUP | POLLERR)) && !(pf[1].revents & POLLIN))
			hup = true;
		if (np == 2 && (pf[1].revents & POLLIN)) {
			struct rule *r;
			struct tally *ty;
			bool mine;

			memset(req, 0, req_sz);
			if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, req) != 0) {
				if (errno == EINTR || errno == ENOENT)
					continue;
				die("SECCOMP_IOCTL_NOTIF_RECV: %s", strerror(errno));
			}
			memset(resp, 0, resp_sz);
			decide(req, resp, listener, &r, &ty, &mine);
			if (ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, resp) != 0) {
				/* the task was interrupted (a signal) and will make the
				 * same call again: do not count this one */
				if (errno == ENOENT) {
					if (r)
						r->seen--;
					if (ty && mine)
						ty->lib--;
					else if (ty)
						ty->other--;
					continue;
				}
				die("SECCOMP_IOCTL_NOTIF_SEND: %s", strerror(errno));
			}
			if (!resp->flags) {
				r->failed++;
				if (ty)
					ty->failed++;
			}
		}
	}

	for (int t = 0; t < n_tallies; t++) {
		char key[64] = "";
		struct tally *ty = &tallies[t];

		if (ty->keyed) {
			key[0] = '[';
			key_text(ty->sc, ty->key, key + 1, sizeof key - 2);
			strcat(key, "]");
		}
		fprintf(log, "faultrun: count %s%s: library %lu other %lu failed %lu\n", ty->sc->name, key, ty->lib,
			ty->other, ty->failed);
	}
	for (int k = 0; k < n_rules; k++)
		if (rules[k].err)
			fprintf(log, "faultrun: rule %s: library %lu failed %lu (%s)\n", rules[k].spec, rules[k].seen,
				rules[k].failed, errno_name(rules[k].err));
	int rc;
	if (WIFEXITED(status)) {
		rc = WEXITSTATUS(status);
		fprintf(log, "faultrun: status exited %d\n", rc);
	} else if (WIFSIGNALED(status)) {
		rc = 128 + WTERMSIG(status);
		fprintf(log, "faultrun: status killed by signal %d (%s)\n", WTERMSIG(status), signame(WTERMSIG(status)));
	} else {
		rc = 125;
		fprintf(log, "faultrun: status %#x\n", status);
	}
	if (log != stderr)
		fclose(log);
	return rc;
#endif
}
