/*
 * runstat — run a command, print how long it took and its peak memory:
 *
 *   runstat COMMAND [ARGS...]   ->   "wall_s user_s sys_s maxrss_kib status" on stderr
 *
 * (fork, exec, wait4: the child's own rusage, nothing of a shell's.)
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: runstat COMMAND [ARGS...]\n");
		return 2;
	}
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	pid_t p = fork();
	if (p < 0) {
		perror("fork");
		return 2;
	}
	if (p == 0) {
		execvp(argv[1], argv + 1);
		perror(argv[1]);
		_exit(127);
	}
	int st = 0;
	struct rusage ru;
	if (wait4(p, &st, 0, &ru) < 0) {
		perror("wait4");
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	double wall = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
	fprintf(stderr, "%.6f %.6f %.6f %ld %d\n", wall, (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6,
	        (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6, ru.ru_maxrss,
	        WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}
