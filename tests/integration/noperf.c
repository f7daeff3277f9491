/*
 * noperf — run a command where perf_event_open is refused, as a container's
 * seccomp filter refuses it:
 *
 *   noperf COMMAND [ARGS...]
 *
 * A seccomp filter (inherited across fork and execve) makes every
 * perf_event_open fail with EACCES; every other system call is allowed.
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)
#define NOPERF_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define NOPERF_ARCH AUDIT_ARCH_AARCH64
#elif defined(__i386__)
#define NOPERF_ARCH AUDIT_ARCH_I386
#endif

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: noperf COMMAND [ARGS...]\n");
		return 2;
	}
#ifndef NOPERF_ARCH
	fprintf(stderr, "noperf: no seccomp architecture constant for this machine\n");
	return 77;
#else
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, NOPERF_ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_perf_event_open, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EACCES & SECCOMP_RET_DATA)),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { (unsigned short)(sizeof f / sizeof f[0]), f };
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) != 0) {
		fprintf(stderr, "noperf: cannot install the seccomp filter: %s\n", strerror(errno));
		return 77;
	}
	if (syscall(__NR_perf_event_open, NULL, 0, -1, -1, 0) != -1 || errno != EACCES) {
		fprintf(stderr, "noperf: the filter does not refuse perf_event_open\n");
		return 1;
	}
	execvp(argv[1], argv + 1);
	fprintf(stderr, "noperf: %s: %s\n", argv[1], strerror(errno));
	return 127;
#endif
}
