/*
 * interpose/tasks.c — fork, posix_spawn, posix_spawnp, system and popen:
 * the ways a program makes a task, so that the deferred worker's own task
 * never costs the program one (runtime/defer.c).
 *
 * A program at its task limit (a pids cgroup's pids.max, RLIMIT_NPROC for
 * a user other than root) has no task to spare for a thread of ours: a
 * fork that would succeed without the library fails with EAGAIN because
 * the worker holds the last one.  Each wrapper calls libc's function; when
 * it fails with EAGAIN and a worker lives, the worker ends
 * (et_defer_give_way: a worker still waiting leaves its work undone) and
 * the call is made once more, so the program gets the task it would have
 * had.  pthread_create does the same (interpose/signals.c).
 *
 * Not covered: vfork (a wrapper cannot return into a vfork child's frame),
 * clone and clone3 called directly, and the tasks libc makes inside other
 * functions (a posix_spawn inside wordexp); the worker leaves by itself
 * once its work is done (defer.c), so those meet it only during the
 * deferral and the work.
 *
 * Owns: those symbols as the program sees them.
 * May call: the next definition of each (libc's), runtime/defer.h.
 * Never: changes what a call does or returns when it succeeds, or when it
 * fails for any reason but EAGAIN; retries more than once; retries when
 * no worker was there to end.
 */
#include "interpose/interpose.h"
#include "runtime/defer.h"

#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

typedef pid_t (*fork_fn)(void);
typedef int (*spawn_fn)(pid_t *, const char *, const posix_spawn_file_actions_t *, const posix_spawnattr_t *,
                        char *const[], char *const[]);
typedef int (*system_fn)(const char *);
typedef FILE *(*popen_fn)(const char *, const char *);

ET_EXPORT pid_t fork(void)
{
	static void *real;
	fork_fn next = (fork_fn)next_symbol(&real, "fork");
	if (!next) {
		errno = ENOSYS;
		return -1;
	}
	pid_t p = next();
	if (p < 0 && errno == EAGAIN && et_defer_give_way("fork found no task free (EAGAIN)"))
		p = next();
	return p;
}

static int spawn(void **cache, const char *name, pid_t *pid, const char *path,
                 const posix_spawn_file_actions_t *fa, const posix_spawnattr_t *at, char *const argv[],
                 char *const envp[])
{
	spawn_fn next = (spawn_fn)next_symbol(cache, name);
	if (!next)
		return ENOSYS;
	int e = next(pid, path, fa, at, argv, envp);
	if (e == EAGAIN && et_defer_give_way("posix_spawn found no task free (EAGAIN)"))
		e = next(pid, path, fa, at, argv, envp);
	return e;
}

ET_EXPORT int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
                          const posix_spawnattr_t *at, char *const argv[], char *const envp[])
{
	static void *real;
	return spawn(&real, "posix_spawn", pid, path, fa, at, argv, envp);
}

ET_EXPORT int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
                           const posix_spawnattr_t *at, char *const argv[], char *const envp[])
{
	static void *real;
	return spawn(&real, "posix_spawnp", pid, file, fa, at, argv, envp);
}

/* system and popen make their task inside libc (not through the symbols
 * above): -1 / NULL with errno EAGAIN is theirs to say the same. */
ET_EXPORT int system(const char *cmd)
{
	static void *real;
	system_fn next = (system_fn)next_symbol(&real, "system");
	if (!next) {
		errno = ENOSYS;
		return -1;
	}
	int r = next(cmd);
	if (r == -1 && errno == EAGAIN && et_defer_give_way("system found no task free (EAGAIN)"))
		r = next(cmd);
	return r;
}

ET_EXPORT FILE *popen(const char *cmd, const char *mode)
{
	static void *real;
	popen_fn next = (popen_fn)next_symbol(&real, "popen");
	if (!next) {
		errno = ENOSYS;
		return NULL;
	}
	FILE *f = next(cmd, mode);
	if (!f && errno == EAGAIN && et_defer_give_way("popen found no task free (EAGAIN)"))
		f = next(cmd, mode);
	return f;
}
