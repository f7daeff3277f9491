/* fork_ctor.c — a library whose constructor forks: the child calls the
 * library's code and exits; the parent waits and keeps the status. */
#include <sys/wait.h>
#include <unistd.h>

static int child_status = -1;

__attribute__((noinline)) static int work(int x)
{
	return x * 3 + 1;
}

__attribute__((constructor)) static void fork_in_constructor(void)
{
	pid_t pid = fork();
	if (pid == 0)
		_exit(work(14) == 43 ? 0 : 1);
	int st;
	if (pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st))
		child_status = WEXITSTATUS(st);
}

__attribute__((visibility("default"))) int fork_ctor_status(void)
{
	return child_status;
}
