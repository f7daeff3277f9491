/*
 * tt_asuser — run a command as another user, to test what happens without
 * permission:
 *
 *   tt_asuser USER COMMAND [ARGS...]
 *
 * Drops supplementary groups, then sets the group and user ids of USER
 * (e.g. nobody) and execs COMMAND.  Needs root: exits 77 (skip) with the
 * reason when it is not, 2 when USER does not exist or a step fails.
 */
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: tt_asuser USER COMMAND [ARGS...]\n");
		return 2;
	}
	if (geteuid() != 0) {
		printf("tt_asuser: not root: cannot switch to user %s\n", argv[1]);
		return 77;
	}
	struct passwd *pw = getpwnam(argv[1]);
	if (!pw) {
		fprintf(stderr, "tt_asuser: no user '%s'\n", argv[1]);
		return 2;
	}
	if (setgroups(0, NULL) != 0 || setgid(pw->pw_gid) != 0 || setuid(pw->pw_uid) != 0) {
		fprintf(stderr, "tt_asuser: cannot become %s: %s\n", argv[1], strerror(errno));
		return 2;
	}
	execvp(argv[2], argv + 2);
	fprintf(stderr, "tt_asuser: %s: %s\n", argv[2], strerror(errno));
	return 2;
}
