/*
 * sk_run — run a command under a seccomp filter that kills the process on
 * the named system calls, installed before exec: what systemd does for a
 * service with SystemCallFilter= (its default action kills the process).
 * For fault.seccomp-kill.
 *
 *   sk_run RULE... -- COMMAND [ARGS...]
 *
 * RULE: SYSCALL[/argI=VALUE][:kill|ERRNO] (sk_filter.h): kill is the
 * default.  prctl(PR_SET_NO_NEW_PRIVS), then seccomp(SECCOMP_SET_MODE_FILTER)
 * through libc's syscall(), then execvp.  Exit 125 when the filter cannot
 * be installed, 127 when the command cannot be run.
 */
#include "sk_filter.h"

#include <sys/prctl.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct sk_rule rules[SK_MAX_RULES];
	struct sock_filter f[4 + 5 * SK_MAX_RULES];
	int n = 0, i;

	for (i = 1; i < argc && strcmp(argv[i], "--"); i++) {
		if (n == SK_MAX_RULES || sk_parse_rule("sk_run", argv[i], &rules[n]) != 0)
			return 125;
		n++;
	}
	if (i + 1 >= argc || n == 0) {
		fprintf(stderr, "usage: sk_run RULE... -- COMMAND [ARGS...]\n");
		return 125;
	}
	struct sock_fprog prog = { .len = sk_build(rules, n, f), .filter = f };
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
	    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0) {
		fprintf(stderr, "sk_run: seccomp: %s\n", strerror(errno));
		return 125;
	}
	execvp(argv[i + 1], argv + i + 1);
	fprintf(stderr, "sk_run: %s: %s\n", argv[i + 1], strerror(errno));
	return 127;
}
