/*
 * thp_off — run a command with transparent huge pages disabled for it:
 *
 *   thp_off COMMAND [ARGS...]
 *
 * prctl(PR_SET_THP_DISABLE, 1) is inherited across fork and kept across
 * execve, so COMMAND (and its children) run as if THP were "never" for them
 * while the system setting stays as it is.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#ifndef PR_SET_THP_DISABLE
#define PR_SET_THP_DISABLE 41
#endif
#ifndef PR_GET_THP_DISABLE
#define PR_GET_THP_DISABLE 42
#endif

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: thp_off COMMAND [ARGS...]\n");
		return 2;
	}
	if (prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0) != 0) {
		fprintf(stderr, "thp_off: prctl(PR_SET_THP_DISABLE): %s\n", strerror(errno));
		return 2;
	}
	if (prctl(PR_GET_THP_DISABLE, 0, 0, 0, 0) != 1) {
		fprintf(stderr, "thp_off: PR_GET_THP_DISABLE does not report the flag set\n");
		return 2;
	}
	execvp(argv[1], argv + 1);
	fprintf(stderr, "thp_off: %s: %s\n", argv[1], strerror(errno));
	return 127;
}
