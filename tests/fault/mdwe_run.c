/*
 * mdwe_run — run a command under memory-deny-write-execute
 * (prctl(PR_SET_MDWE, PR_MDWE_REFUSE_EXEC_GAIN), Linux 6.3, inherited
 * across execve), as systemd's MemoryDenyWriteExecute= does where the
 * kernel has it:
 *
 *   mdwe_run COMMAND [ARGS...]
 *
 * Exit 77 when the kernel has no such setting.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#ifndef PR_SET_MDWE
#define PR_SET_MDWE 65
#endif
#ifndef PR_MDWE_REFUSE_EXEC_GAIN
#define PR_MDWE_REFUSE_EXEC_GAIN 1
#endif

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: mdwe_run COMMAND [ARGS...]\n");
		return 2;
	}
	if (prctl(PR_SET_MDWE, PR_MDWE_REFUSE_EXEC_GAIN, 0UL, 0UL, 0UL) != 0) {
		fprintf(stderr, "mdwe_run: prctl(PR_SET_MDWE): %s\n", strerror(errno));
		return errno == EINVAL ? 77 : 2;
	}
	execvp(argv[1], argv + 1);
	fprintf(stderr, "mdwe_run: %s: %s\n", argv[1], strerror(errno));
	return 126;
}
