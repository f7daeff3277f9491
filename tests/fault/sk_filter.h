/*
 * sk_filter.h — the kill filters of fault.seccomp-kill (sk_run.c, sk_prog.c):
 * a classic-BPF seccomp program built from rules written as faultrun's
 * SPEC (tests/fault/faultrun.c), and its installation.
 *
 *   RULE:  SYSCALL[/argI=VALUE][:ACTION]
 *     SYSCALL  a name of the table below (faultrun's names, and a few more)
 *     argI     only when argument I (0-based) equals VALUE in its low 32
 *              bits (the key arguments are ints: advice, option, flags,
 *              prot): a number, or names joined with '|' (MADV_COLLAPSE,
 *              PR_GET_THP_DISABLE, MAYMOVE|FIXED or MREMAP_MAYMOVE|...,
 *              PROT_READ|PROT_EXEC)
 *     ACTION   absent or "kill": SECCOMP_RET_KILL_PROCESS (the process
 *              dies of SIGSYS, exit status 159 to a shell); an errno name
 *              or number: SECCOMP_RET_ERRNO with it (as container runtimes
 *              refuse perf_event_open)
 *   A call of another architecture, and any call no rule matches, is
 *   allowed.  The first rule that matches decides.
 *
 * Header-only (static functions): each program includes it once.
 */
#ifndef SK_FILTER_H
#define SK_FILTER_H

#define _GNU_SOURCE
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#if defined(__x86_64__)
#define SK_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define SK_ARCH AUDIT_ARCH_AARCH64
#endif

#ifndef SECCOMP_RET_KILL_PROCESS
#define SECCOMP_RET_KILL_PROCESS 0x80000000U
#endif
#ifndef SECCOMP_FILTER_FLAG_TSYNC
#define SECCOMP_FILTER_FLAG_TSYNC 1
#endif

struct sk_sc {
	const char *name;
	long nr;
};

static const struct sk_sc sk_sc_table[] = {
	{ "mmap", SYS_mmap }, { "mremap", SYS_mremap }, { "mprotect", SYS_mprotect },
	{ "pkey_mprotect", SYS_pkey_mprotect }, { "madvise", SYS_madvise }, { "munmap", SYS_munmap },
#ifdef SYS_open
	{ "open", SYS_open },
#endif
	{ "openat", SYS_openat }, { "read", SYS_read }, { "pread64", SYS_pread64 }, { "write", SYS_write },
	{ "close", SYS_close }, { "fadvise64", SYS_fadvise64 }, { "prctl", SYS_prctl },
	{ "process_madvise", 440 }, { "memfd_create", SYS_memfd_create },
	{ "perf_event_open", SYS_perf_event_open }, { "timer_create", SYS_timer_create },
	{ "timer_settime", SYS_timer_settime }, { "rt_sigaction", SYS_rt_sigaction }, { "ioctl", SYS_ioctl },
	{ "unshare", SYS_unshare }, { "close_range", 436 }, { "pidfd_open", 434 }, { "pidfd_getfd", 438 },
	{ "getdents64", SYS_getdents64 }, { "fstatfs", SYS_fstatfs }, { "cachestat", 451 },
	/* not faultrun's: for the self-checks and by hand */
	{ "clone", SYS_clone },
#ifdef SYS_clone3
	{ "clone3", SYS_clone3 },
#endif
	{ "getpid", SYS_getpid }, { "kexec_load", SYS_kexec_load }, { "mincore", SYS_mincore },
};

struct sk_sym {
	const char *name;
	uint64_t v;
};

static const struct sk_sym sk_syms[] = {
	{ "MADV_NORMAL", 0 }, { "MADV_RANDOM", 1 }, { "MADV_SEQUENTIAL", 2 }, { "MADV_WILLNEED", 3 },
	{ "MADV_DONTNEED", 4 }, { "MADV_FREE", 8 }, { "MADV_REMOVE", 9 }, { "MADV_DONTFORK", 10 },
	{ "MADV_DOFORK", 11 }, { "MADV_MERGEABLE", 12 }, { "MADV_UNMERGEABLE", 13 },
	{ "MADV_HUGEPAGE", 14 }, { "MADV_NOHUGEPAGE", 15 }, { "MADV_DONTDUMP", 16 }, { "MADV_DODUMP", 17 },
	{ "MADV_COLD", 20 }, { "MADV_PAGEOUT", 21 }, { "MADV_POPULATE_READ", 22 },
	{ "MADV_POPULATE_WRITE", 23 }, { "MADV_COLLAPSE", 25 },
	{ "MREMAP_MAYMOVE", 1 }, { "MREMAP_FIXED", 2 }, { "MREMAP_DONTUNMAP", 4 },
	{ "MAYMOVE", 1 }, { "FIXED", 2 }, { "DONTUNMAP", 4 },
	{ "PROT_NONE", 0 }, { "PROT_READ", 1 }, { "PROT_WRITE", 2 }, { "PROT_EXEC", 4 },
	{ "PR_SET_PDEATHSIG", 1 }, { "PR_GET_DUMPABLE", 3 }, { "PR_SET_DUMPABLE", 4 },
	{ "PR_SET_NAME", 15 }, { "PR_GET_NAME", 16 }, { "PR_GET_SECCOMP", 21 }, { "PR_SET_SECCOMP", 22 },
	{ "PR_SET_TIMERSLACK", 29 }, { "PR_SET_NO_NEW_PRIVS", 38 }, { "PR_GET_NO_NEW_PRIVS", 39 },
	{ "PR_SET_THP_DISABLE", 41 }, { "PR_GET_THP_DISABLE", 42 }, { "PR_SET_VMA", 0x53564d41 },
	{ "SIGPROF", 27 },
};

static const struct {
	const char *name;
	int e;
} sk_errnames[] = {
	{ "EPERM", EPERM }, { "ENOENT", ENOENT }, { "EINTR", EINTR }, { "EIO", EIO }, { "EAGAIN", EAGAIN },
	{ "ENOMEM", ENOMEM }, { "EACCES", EACCES }, { "EFAULT", EFAULT }, { "EBUSY", EBUSY },
	{ "EINVAL", EINVAL }, { "ENOSYS", ENOSYS }, { "EOPNOTSUPP", EOPNOTSUPP }, { "ENODEV", ENODEV },
};

struct sk_rule {
	long nr;
	int argi;          /* -1: any arguments */
	uint32_t argv;     /* low 32 bits */
	uint32_t action;
};

#define SK_MAX_RULES 32

static int sk_parse_value(const char *s, uint64_t *out)
{
	char buf[256];
	uint64_t v = 0;

	if (strlen(s) >= sizeof buf)
		return -1;
	strcpy(buf, s);
	for (char *save = NULL, *t = strtok_r(buf, "|", &save); t; t = strtok_r(NULL, "|", &save)) {
		char *end;
		size_t i;

		errno = 0;
		unsigned long long n = strtoull(t, &end, 0);
		if (!errno && end != t && !*end) {
			v |= n;
			continue;
		}
		for (i = 0; i < sizeof sk_syms / sizeof sk_syms[0]; i++)
			if (!strcmp(sk_syms[i].name, t))
				break;
		if (i == sizeof sk_syms / sizeof sk_syms[0])
			return -1;
		v |= sk_syms[i].v;
	}
	*out = v;
	return 0;
}

/* RULE -> *r; 0, or -1 with a message on stderr. */
static int sk_parse_rule(const char *prog, const char *spec, struct sk_rule *r)
{
	char buf[256];
	char *act, *arg;

	if (strlen(spec) >= sizeof buf)
		goto bad;
	strcpy(buf, spec);
	act = strchr(buf, ':');
	if (act)
		*act++ = 0;
	arg = strchr(buf, '/');
	if (arg)
		*arg++ = 0;
	r->nr = -1;
	for (size_t i = 0; i < sizeof sk_sc_table / sizeof sk_sc_table[0]; i++)
		if (!strcmp(sk_sc_table[i].name, buf))
			r->nr = sk_sc_table[i].nr;
	if (r->nr < 0)
		goto bad;
	r->argi = -1;
	r->argv = 0;
	if (arg) {
		uint64_t v;
		if (strncmp(arg, "arg", 3) || arg[3] < '0' || arg[3] > '5' || arg[4] != '=' ||
		    sk_parse_value(arg + 5, &v) != 0)
			goto bad;
		r->argi = arg[3] - '0';
		r->argv = (uint32_t)v;
	}
	r->action = SECCOMP_RET_KILL_PROCESS;
	if (act && strcmp(act, "kill")) {
		int e = -1;
		char *end;
		long n = strtol(act, &end, 0);
		if (end != act && !*end && n > 0 && n < 4096)
			e = (int)n;
		for (size_t i = 0; e < 0 && i < sizeof sk_errnames / sizeof sk_errnames[0]; i++)
			if (!strcmp(sk_errnames[i].name, act))
				e = sk_errnames[i].e;
		if (e < 0)
			goto bad;
		r->action = SECCOMP_RET_ERRNO | ((uint32_t)e & SECCOMP_RET_DATA);
	}
	return 0;
bad:
	fprintf(stderr, "%s: bad rule '%s' (SYSCALL[/argI=VALUE][:kill|ERRNO])\n", prog, spec);
	return -1;
}

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define SK_LO(i) (offsetof(struct seccomp_data, args) + 8 * (i))
#else
#define SK_LO(i) (offsetof(struct seccomp_data, args) + 8 * (i) + 4)
#endif

/* The program for n rules into f (room for 4 + 5 * n); its length. */
static unsigned short sk_build(const struct sk_rule *r, int n, struct sock_filter *f)
{
	unsigned short k = 0;

#ifdef SK_ARCH
	f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
	f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SK_ARCH, 1, 0);
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
#endif
	for (int i = 0; i < n; i++) {
		/* LD nr; JEQ nr ? next : skip the rest of the block */
		unsigned char rest = r[i].argi >= 0 ? 3 : 1;
		f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
		f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)r[i].nr, 0, rest);
		if (r[i].argi >= 0) {
			f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, (uint32_t)SK_LO(r[i].argi));
			f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, r[i].argv, 0, 1);
		}
		f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, r[i].action);
	}
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	return k;
}

#endif
