/*
 * dp_prog — the program of the ENORMOUSTEXT_DEFER tests (defer-*.sh): 8 MiB
 * of text of its own (the integration tests' generated functions), called
 * and checked, with what a deferred worker must not break done around it.
 *
 *   dp_prog [--unshare] [--fork] [--threads] [--hold MS] [--pidfile F]
 *
 *   --unshare  unshare(CLONE_NEWUSER) first thing in main: a program that
 *              is single-threaded must stay able to (EINVAL otherwise);
 *              then the number of its threads
 *   --setns    setns into its own UTS namespace (/proc/self/ns/uts)
 *   --chroot D chroot(D) (D must hold nothing the program needs later)
 *   --fork     a child that calls every function and exits 42 when all
 *              were right
 *   --threads  the number of threads in /proc/self/task, first thing
 *   --hold MS  keep calling the functions for MS milliseconds of wall time
 *   --vfork    during the hold, vfork and exec /bin/true, again and again
 *   --exit-at MS, --_exit-at MS
 *              end with exit(0) / _exit(0) after MS milliseconds (after
 *              printing the results), whatever a worker is doing then
 *   --pidfile  write the pid there once main runs (for the test to watch)
 *   --hot-middle
 *              during the hold, call only 32 functions (128 KiB) from the
 *              middle of the text, over and over: one hot window
 *   --unshare-at MS
 *              during the hold, after MS milliseconds, unshare(CLONE_NEWUSER)
 *              (a worker still copying must stand down for it to work)
 *   --thp-off  prctl(PR_SET_THP_DISABLE, 1) first thing in main (as
 *              MariaDB and Redis do), then PR_GET_THP_DISABLE
 *   --thp-off-at MS
 *              the same during the hold, after MS milliseconds
 *   --unshare-in-phdr MS
 *              first thing in main, from inside a dl_iterate_phdr callback
 *              (which holds the loader's lock), sleep MS milliseconds, then
 *              unshare(CLONE_NEWUSER): a worker whose deadline passed in
 *              the sleep waits for that lock and cannot stand down
 *   --tasks N  first thing in main, make tasks one at a time, each waited
 *              for before the next: N forks, N posix_spawns of /bin/true,
 *              N threads (pthread_create + join), N system("exit 0");
 *              prints how many of each succeeded and the first error
 *   --tasks-at MS
 *              the same during the hold, after MS milliseconds
 *   --alloc MIB
 *              first thing in main, allocate MIB MiB and touch every page
 *   --alloc-at MS MIB
 *              during the hold, after MS milliseconds, MIB MiB more, touched
 *   --dlopen LIB
 *              at the middle of the hold, dlopen LIB (a libbigtext.so copy)
 *              and call and check its functions too
 *
 * Prints only what it computed (no addresses, no timing): a run with the
 * library must print the same as one without.  Exit 0, or 1 when a result
 * was wrong.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bigtext.h"
#include "../lib/et_test.h"   /* et_round_all */

static unsigned round_middle(void)
{
	unsigned wrong = 0;
	for (unsigned i = bt_exe_count / 2; i < bt_exe_count / 2 + 32 && i < bt_exe_count; i++) {
		uint64_t x = bt_arg(BT_OBJ_EXE, i);
		if (bt_exe_table[i](x) != bt_expect(BT_OBJ_EXE, i, x))
			wrong++;
	}
	return wrong;
}

/* vfork, exec /bin/true in the child, wait: did it run? (A function of
 * its own: nothing of the caller's lives across the vfork.) */
static __attribute__((noinline)) bool vfork_true(void)
{
	pid_t c = vfork();
	if (c == 0) {
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	int st = 0;
	return c > 0 && waitpid(c, &st, 0) == c && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

static int threads(void)
{
	DIR *d = opendir("/proc/self/task");
	int n = 0;
	if (!d)
		return -1;
	for (struct dirent *e; (e = readdir(d));)
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec / 1e9;
}

static void *nothing(void *arg)
{
	return arg;
}

/* N of each way to make a task, one at a time (see --tasks). */
static void tasks(int n)
{
	extern char **environ;
	int ok[4] = { 0 }, err[4] = { 0 };
	for (int i = 0; i < n; i++) {
		pid_t c = fork();
		if (c == 0)
			_exit(0);
		int st;
		if (c > 0 && waitpid(c, &st, 0) == c && WIFEXITED(st) && WEXITSTATUS(st) == 0)
			ok[0]++;
		else if (!err[0])
			err[0] = c < 0 ? errno : -1;
	}
	for (int i = 0; i < n; i++) {
		char *av[] = { "true", NULL };
		pid_t c;
		int e = posix_spawn(&c, "/bin/true", NULL, NULL, av, environ), st;
		if (!e && waitpid(c, &st, 0) == c && WIFEXITED(st) && WEXITSTATUS(st) == 0)
			ok[1]++;
		else if (!err[1])
			err[1] = e ? e : -1;
	}
	for (int i = 0; i < n; i++) {
		pthread_t t;
		int e = pthread_create(&t, NULL, nothing, NULL);
		if (!e && pthread_join(t, NULL) == 0)
			ok[2]++;
		else if (!err[2])
			err[2] = e ? e : -1;
	}
	for (int i = 0; i < n; i++) {
		int r = system("exit 0");
		if (r == 0)
			ok[3]++;
		else if (!err[3])
			err[3] = r == -1 ? errno : -1;
	}
	static const char *const what[] = { "fork", "posix_spawn", "pthread_create", "system" };
	for (int k = 0; k < 4; k++)
		printf("%s: %d of %d%s%s\n", what[k], ok[k], n, err[k] ? ", first error " : "",
		       err[k] > 0 ? strerror(err[k]) : err[k] < 0 ? "the task did not end well" : "");
	fflush(stdout);
}

/* MIB MiB of anonymous memory, every page written (kept to the end) */
static void touch_mib(int mib)
{
	size_t n = (size_t)mib << 20;
	char *p = malloc(n);
	if (!p) {
		printf("alloc %d MiB: failed\n", mib);
		return;
	}
	for (size_t i = 0; i < n; i += 4096)
		p[i] = (char)i;
	printf("alloc %d MiB: touched\n", mib);
	fflush(stdout);
}

static int g_phdr_ms;

static int unshare_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)info;
	(void)size;
	struct timespec t = {g_phdr_ms / 1000, (g_phdr_ms % 1000) * 1000000L};
	nanosleep(&t, NULL);
	int r = unshare(CLONE_NEWUSER);
	*(int *)data = r == 0 ? 0 : errno;
	return 1;   /* the first object only */
}

static void thp_off(void)
{
	int r = prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0);
	printf("prctl(PR_SET_THP_DISABLE): %s\n", r == 0 ? "ok" : strerror(errno));
	printf("PR_GET_THP_DISABLE: %d\n", prctl(PR_GET_THP_DISABLE, 0, 0, 0, 0));
	fflush(stdout);
}

int main(int argc, char **argv)
{
	int hold_ms = 0;
	bool hot_middle = false;
	bool do_unshare = false, do_fork = false, do_threads = false, do_vfork = false, do_setns = false;
	const char *root = NULL;
	int exit_ms = -1, quick_exit_ms = -1, unshare_ms = -1, thp_off_ms = -1, ntasks = 0, tasks_ms = -1;
	int alloc_mib = 0, alloc_ms = -1, alloc_more = 0;
	const char *pidfile = NULL, *lib = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--unshare"))
			do_unshare = true;
		else if (!strcmp(argv[i], "--fork"))
			do_fork = true;
		else if (!strcmp(argv[i], "--threads"))
			do_threads = true;
		else if (!strcmp(argv[i], "--hold") && i + 1 < argc)
			hold_ms = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--setns"))
			do_setns = true;
		else if (!strcmp(argv[i], "--chroot") && i + 1 < argc)
			root = argv[++i];
		else if (!strcmp(argv[i], "--vfork"))
			do_vfork = true;
		else if (!strcmp(argv[i], "--exit-at") && i + 1 < argc)
			exit_ms = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--_exit-at") && i + 1 < argc)
			quick_exit_ms = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--unshare-in-phdr") && i + 1 < argc)
			g_phdr_ms = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--dlopen") && i + 1 < argc)
			lib = argv[++i];
		else if (!strcmp(argv[i], "--hot-middle"))
			hot_middle = true;
		else if (!strcmp(argv[i], "--thp-off"))
			thp_off_ms = 0;
		else if (!strcmp(argv[i], "--thp-off-at") && i + 1 < argc)
			thp_off_ms = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--unshare-at") && i + 1 < argc)
			unshare_ms = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--alloc") && i + 1 < argc)
			alloc_mib = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--alloc-at") && i + 2 < argc) {
			alloc_ms = atoi(argv[++i]);
			alloc_more = atoi(argv[++i]);
		} else if (!strcmp(argv[i], "--tasks") && i + 1 < argc)
			ntasks = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--tasks-at") && i + 1 < argc)
			tasks_ms = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--pidfile") && i + 1 < argc)
			pidfile = argv[++i];
		else {
			fprintf(stderr, "dp_prog: unknown argument '%s'\n", argv[i]);
			return 2;
		}
	}
	if (pidfile) {
		FILE *f = fopen(pidfile, "w");
		if (!f || fprintf(f, "%ld\n", (long)getpid()) < 0 || fclose(f) != 0) {
			perror(pidfile);
			return 2;
		}
	}
	if (do_threads)
		printf("threads: %d\n", threads());
	if (ntasks > 0 && tasks_ms < 0)
		tasks(ntasks);
	if (alloc_mib > 0)
		touch_mib(alloc_mib);
	if (thp_off_ms == 0) {
		thp_off();
		thp_off_ms = -1;
	}
	if (g_phdr_ms > 0) {
		int e = 0;
		dl_iterate_phdr(unshare_cb, &e);
		printf("unshare(CLONE_NEWUSER) in dl_iterate_phdr: %s\n", e == 0 ? "ok" : strerror(e));
	}
	if (do_unshare) {
		int r = unshare(CLONE_NEWUSER);
		printf("unshare(CLONE_NEWUSER): %s\n", r == 0 ? "ok" : strerror(errno));
		printf("threads after unshare: %d\n", threads());
	}
	if (do_setns) {
		int fd = open("/proc/self/ns/uts", O_RDONLY | O_CLOEXEC);
		int r = fd < 0 ? -1 : setns(fd, CLONE_NEWUTS);
		printf("setns(uts): %s\n", r == 0 ? "ok" : strerror(errno));
		printf("threads after setns: %d\n", threads());
		if (fd >= 0)
			close(fd);
	}
	if (root) {
		int r = chroot(root);
		printf("chroot: %s\n", r == 0 ? "ok" : strerror(errno));
		if (r == 0 && chdir("/") != 0)
			printf("chdir /: %s\n", strerror(errno));
	}
	unsigned wrong = et_round_all();
	if (do_fork) {
		fflush(stdout);
		pid_t c = fork();
		if (c == 0)
			_exit(et_round_all() == 0 ? 42 : 1);
		int st = 0;
		if (c < 0 || waitpid(c, &st, 0) != c)
			printf("fork: failed\n");
		else
			printf("fork: child exited %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	}
	double start = now(), end = start + hold_ms / 1000.0;
	unsigned execs = 0, exec_bad = 0;
	const bt_fn *lt = NULL;
	unsigned ln = 0;
	while (now() < end) {
		wrong += hot_middle ? round_middle() : et_round_all();
		if (lib && !lt && now() >= start + hold_ms / 2000.0) {
			void *h = dlopen(lib, RTLD_NOW);
			const bt_fn *(*get)(unsigned *) = h ? (const bt_fn *(*)(unsigned *))dlsym(h, "bt_lib_table") : NULL;
			if (!get) {
				printf("dlopen %s: failed\n", lib);
				lib = NULL;
			} else {
				lt = get(&ln);
			}
		}
		for (unsigned i = 0; lt && i < ln; i++) {
			uint64_t x = bt_arg(BT_OBJ_LIB, i);
			if (lt[i](x) != bt_expect(BT_OBJ_LIB, i, x))
				wrong++;
		}
		if (thp_off_ms >= 0 && now() >= start + thp_off_ms / 1000.0) {
			thp_off();
			thp_off_ms = -1;
		}
		if (unshare_ms >= 0 && now() >= start + unshare_ms / 1000.0) {
			int r = unshare(CLONE_NEWUSER);
			printf("unshare(CLONE_NEWUSER) during the hold: %s\n", r == 0 ? "ok" : strerror(errno));
			printf("threads after it: %d\n", threads());
			unshare_ms = -1;
		}
		if (alloc_ms >= 0 && now() >= start + alloc_ms / 1000.0) {
			touch_mib(alloc_more);
			alloc_ms = -1;
		}
		if (ntasks > 0 && tasks_ms >= 0 && now() >= start + tasks_ms / 1000.0) {
			tasks(ntasks);
			tasks_ms = -1;
		}
		if (do_vfork) {
			execs++;
			exec_bad += !vfork_true();
		}
	}
	if (do_vfork)
		printf("vfork+exec: %s\n", execs && !exec_bad ? "all ran" : "SOME FAILED");
	if (lt)
		printf("dlopen: %u functions called\n", ln);
	printf("functions: %u, %s\n", bt_exe_count, wrong ? "WRONG results" : "all results right");
	fflush(stdout);
	int at = exit_ms >= 0 ? exit_ms : quick_exit_ms;
	if (at >= 0) {
		double t = start + at / 1000.0;
		while (now() < t)
			wrong += et_round_all();
		if (quick_exit_ms >= 0)
			_exit(wrong ? 1 : 0);
		exit(wrong ? 1 : 0);
	}
	return wrong ? 1 : 0;
}
