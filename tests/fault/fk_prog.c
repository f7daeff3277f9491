/*
 * fk_prog — the program of fault.fork-pass: forks again and again, from
 * several threads, while the library's passes run, and counts the children
 * that never finish their first dlopen.
 *
 *   fk_prog [--seconds S] [--forkers N] [--check-ms MS] [--deadline-ms MS]
 *           [--dlopen LIB]... --child LIB
 *
 * It carries 8 MiB of text of its own (the integration tests' generated
 * functions, bigtext.h), so that a pass over it copies for a while.
 *   forkers    N threads (default 3), from the first moment of main for S
 *              seconds (default 0.3): fork; the child dlopens LIB (--child:
 *              a small library no one has loaded, so the loader must add it
 *              to its list, which takes glibc's dl_load_write_lock), calls
 *              its function and _exits 0.  The forker does not wait for
 *              each child: up to 64 of its children run at once, each
 *              watched from its fork on.
 *   --dlopen   a thread that dlopens, calls and dlcloses these libraries
 *              (cp'ed libbigtext.so copies), one after the other, as long
 *              as the forkers run (with the library preloaded a pass runs
 *              after each dlopen, in the caller or on the deferred worker).
 * A child is STUCK when, at least --check-ms (default 300) after its fork,
 * it sits in futex(2) (/proc/PID/syscall) twice, 200 ms apart: it is one
 * thread, so a lock it waits for is held by a thread that is not in it and
 * is never let go; or when it has not finished --deadline-ms (default
 * 10000) after its fork, whatever it does.  Stuck children are killed
 * (SIGKILL) and reaped.  Each child also has alarm(60) and
 * PR_SET_PDEATHSIG(SIGKILL) as backstops: none outlives the test.
 * Where it stopped comes from a shared page it writes: before its first
 * dlopen, in it, after it.
 *
 * A child that ends with another status than 0 CRASHED: glibc's own
 * "Inconsistency detected by ld.so: dl-load.c: ...: _dl_map_object_from_fd:
 * Assertion `r->r_state == RT_ADD' failed!" (exit 127) is what a child
 * forked while another thread was in dlclose (r_debug in RT_DELETE) meets
 * in its first dlopen.
 *
 * Prints (stdout):
 *   fk_prog: forks F stuck K (in dlopen A, before it B, after it C) crashed X failed Y
 *   fk_prog: dlopen/dlclose cycles N, W wrong results   (with --dlopen)
 *   fk_prog: stuck child: forked T0-T1 ms after main, ... (the first 5)
 *   fk_prog: crashed child: ...                           (the first 5)
 *   fk_prog: functions: M, all results right
 * Exit 0; 1 when the program itself went wrong (a fork or one of its own
 * dlopens failed, a function returned a wrong value); 2 usage.  Stuck and
 * crashed children are not a failure of the program: the test compares
 * the counts of plain and preloaded runs.
 *
 * Built a second time with -DFK_CHILD_LIB as libfk_child.so, the
 * children's library (one function).
 */
#define _GNU_SOURCE

#ifdef FK_CHILD_LIB
int fk_child_fn(void);
int fk_child_fn(void)
{
	return 42;
}
#else

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bigtext.h"
#include "../lib/et_test.h"   /* et_round_all */

#define MAX_FORKERS 8
#define MAX_OUT 64          /* children of one forker running at once */
#define MAX_LIBS 8
#define SHOW_STUCK 5

enum { ST_FORKED = 1, ST_IN_DLOPEN = 2, ST_AFTER = 3 };

static double g_seconds = 0.3;
static int g_forkers = 3;
static int g_check_ms = 300, g_deadline_ms = 10000;
static const char *g_child_lib;
static const char *g_libs[MAX_LIBS];
static int g_nlibs;
static double g_t0;
static volatile unsigned char *g_stage;   /* shared with the children: [forker * MAX_OUT + slot] */
static int g_stop_dl;

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static uint64_t g_forks, g_crashed, g_stuck, g_stuck_in, g_stuck_before, g_stuck_after, g_failed, g_cycles, g_wrong;
static int g_shown, g_crash_shown;

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void sleep_ms(double ms)
{
	struct timespec t = { (time_t)(ms / 1000), (long)((ms - (double)(time_t)(ms / 1000) * 1000) * 1e6) };
	while (nanosleep(&t, &t) != 0 && errno == EINTR)
		;
}

/* The system call the child sits in (-1: running, or unreadable). */
static long child_syscall(pid_t pid, char *wchan, size_t wn)
{
	char path[64], buf[256];
	long nr = -1;
	snprintf(path, sizeof path, "/proc/%ld/syscall", (long)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		ssize_t n = read(fd, buf, sizeof buf - 1);
		if (n > 0) {
			buf[n] = '\0';
			if (buf[0] >= '0' && buf[0] <= '9')
				nr = strtol(buf, NULL, 10);
		}
		close(fd);
	}
	if (wchan && wn) {
		wchan[0] = '\0';
		snprintf(path, sizeof path, "/proc/%ld/wchan", (long)pid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			ssize_t n = read(fd, wchan, wn - 1);
			wchan[n > 0 ? n : 0] = '\0';
			close(fd);
		}
	}
	return nr;
}

struct child {
	pid_t pid;
	double forked;        /* now() when fork was called */
	double returned;      /* now() when it returned in the parent */
	double futex_seen;    /* now() when first seen in futex after check_ms, 0 not yet */
};

struct forker {
	int id;
	struct child c[MAX_OUT];
};

/* The child: first dlopen of a library no one has loaded, then _exit. */
static __attribute__((noreturn)) void child_main(volatile unsigned char *stage)
{
	*stage = ST_FORKED;
	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	alarm(60);
	*stage = ST_IN_DLOPEN;
	void *h = dlopen(g_child_lib, RTLD_NOW | RTLD_LOCAL);
	*stage = ST_AFTER;
	if (!h)
		_exit(3);
	int (*fn)(void) = (int (*)(void))dlsym(h, "fk_child_fn");
	_exit(fn && fn() == 42 ? 0 : 4);
}

static void stuck_child(struct forker *f, int i, const char *why)
{
	struct child *c = &f->c[i];
	unsigned char st = g_stage[f->id * MAX_OUT + i];
	char wchan[64];
	long nr = child_syscall(c->pid, wchan, sizeof wchan);
	kill(c->pid, SIGKILL);
	int ws;
	while (waitpid(c->pid, &ws, 0) < 0 && errno == EINTR)
		;
	pthread_mutex_lock(&g_mu);
	g_stuck++;
	if (st == ST_IN_DLOPEN)
		g_stuck_in++;
	else if (st == ST_AFTER)
		g_stuck_after++;
	else
		g_stuck_before++;
	if (g_shown++ < SHOW_STUCK)
		printf("fk_prog: stuck child: forked %.1f-%.1f ms after main by forker %d, %s, %s; syscall %ld, wchan %s\n",
		       (c->forked - g_t0) * 1000, (c->returned - g_t0) * 1000, f->id,
		       st == ST_IN_DLOPEN ? "in its first dlopen" : st == ST_AFTER ? "after its dlopen" :
		       st == ST_FORKED ? "before its dlopen" : "before its first instruction (fork's child side)",
		       why, nr, wchan[0] ? wchan : "?");
	pthread_mutex_unlock(&g_mu);
	c->pid = 0;
}

/* Look at each running child once: reap the finished, kill the stuck.
 * Returns how many still run. */
static int reap(struct forker *f)
{
	int running = 0;
	for (int i = 0; i < MAX_OUT; i++) {
		struct child *c = &f->c[i];
		if (!c->pid)
			continue;
		int ws = 0;
		pid_t w = waitpid(c->pid, &ws, WNOHANG);
		if (w == c->pid) {
			if (!WIFEXITED(ws) || WEXITSTATUS(ws) != 0) {
				unsigned char st = g_stage[f->id * MAX_OUT + i];
				pthread_mutex_lock(&g_mu);
				g_crashed++;
				if (g_crash_shown++ < SHOW_STUCK)
					printf("fk_prog: crashed child: forked %.1f-%.1f ms after main by forker %d, %s %d, %s\n",
					       (c->forked - g_t0) * 1000, (c->returned - g_t0) * 1000, f->id,
					       WIFEXITED(ws) ? "exit" : "signal", WIFEXITED(ws) ? WEXITSTATUS(ws) : WTERMSIG(ws),
					       st == ST_IN_DLOPEN ? "in its first dlopen" : st == ST_AFTER ? "after its dlopen" :
					       "before its dlopen");
				pthread_mutex_unlock(&g_mu);
			}
			c->pid = 0;
			continue;
		}
		double t = now(), age = (t - c->forked) * 1000;
		if (age >= g_deadline_ms) {
			stuck_child(f, i, "not finished at the deadline");
			continue;
		}
		if (age >= g_check_ms) {
			if (child_syscall(c->pid, NULL, 0) == 202 /* futex */) {
				if (!c->futex_seen)
					c->futex_seen = t;
				else if (t - c->futex_seen >= 0.2) {
					stuck_child(f, i, "waiting in futex (a lock no thread of it holds)");
					continue;
				}
			} else {
				c->futex_seen = 0;
			}
		}
		running++;
	}
	return running;
}

static void *forker_main(void *arg)
{
	struct forker *f = arg;
	double end = g_t0 + g_seconds;
	uint64_t forks = 0;
	while (now() < end) {
		reap(f);
		int slot = -1;
		for (int i = 0; i < MAX_OUT && slot < 0; i++)
			if (!f->c[i].pid)
				slot = i;
		if (slot < 0) {
			sleep_ms(1);
			continue;
		}
		volatile unsigned char *stage = &g_stage[f->id * MAX_OUT + slot];
		*stage = 0;
		double t = now();
		pid_t pid = fork();
		if (pid == 0)
			child_main(stage);
		if (pid < 0) {
			pthread_mutex_lock(&g_mu);
			if (g_failed++ == 0)
				printf("fk_prog: WRONG: fork: %s\n", strerror(errno));
			pthread_mutex_unlock(&g_mu);
			sleep_ms(10);
			continue;
		}
		f->c[slot] = (struct child){ pid, t, now(), 0 };
		forks++;
	}
	while (reap(f) > 0)
		sleep_ms(2);
	pthread_mutex_lock(&g_mu);
	g_forks += forks;
	pthread_mutex_unlock(&g_mu);
	return NULL;
}

static void *dlopen_main(void *arg)
{
	(void)arg;
	uint64_t cycles = 0, wrong = 0;
	for (unsigned k = 0; !__atomic_load_n(&g_stop_dl, __ATOMIC_ACQUIRE); k++) {
		const char *lib = g_libs[k % (unsigned)g_nlibs];
		void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
		if (!h) {
			pthread_mutex_lock(&g_mu);
			if (g_failed++ == 0)
				printf("fk_prog: WRONG: dlopen %s: %s\n", lib, dlerror());
			pthread_mutex_unlock(&g_mu);
			break;
		}
		const bt_fn *(*get)(unsigned *) = (const bt_fn *(*)(unsigned *))dlsym(h, "bt_lib_table");
		unsigned n = 0;
		const bt_fn *t = get ? get(&n) : NULL;
		if (!t || !n)
			wrong++;
		for (unsigned i = k % 64; t && i < n; i += n / 16 + 1) {
			uint64_t x = bt_arg(BT_OBJ_LIB, i);
			wrong += t[i](x) != bt_expect(BT_OBJ_LIB, i, x);
		}
		dlclose(h);
		cycles++;
	}
	pthread_mutex_lock(&g_mu);
	g_cycles += cycles;
	g_wrong += wrong;
	pthread_mutex_unlock(&g_mu);
	return NULL;
}

static int usage(void)
{
	fprintf(stderr, "usage: fk_prog [--seconds S] [--forkers N] [--check-ms MS] [--deadline-ms MS] "
	                "[--dlopen LIB]... --child LIB\n");
	return 2;
}

int main(int argc, char **argv)
{
	g_t0 = now();
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
			g_seconds = atof(argv[++i]);
		else if (!strcmp(argv[i], "--forkers") && i + 1 < argc)
			g_forkers = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--check-ms") && i + 1 < argc)
			g_check_ms = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--deadline-ms") && i + 1 < argc)
			g_deadline_ms = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--dlopen") && i + 1 < argc && g_nlibs < MAX_LIBS)
			g_libs[g_nlibs++] = argv[++i];
		else if (!strcmp(argv[i], "--child") && i + 1 < argc)
			g_child_lib = argv[++i];
		else
			return usage();
	}
	if (!g_child_lib || g_forkers < 1 || g_forkers > MAX_FORKERS || g_seconds <= 0 || g_check_ms < 1 ||
	    g_deadline_ms < g_check_ms)
		return usage();
	setvbuf(stdout, NULL, _IOLBF, 0);
	g_stage = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (g_stage == MAP_FAILED) {
		perror("fk_prog: mmap");
		return 2;
	}
	static struct forker f[MAX_FORKERS];
	pthread_t th[MAX_FORKERS], dl;
	/* the forkers first: the deferred worker's start-up pass may begin any
	 * moment now */
	for (int i = 0; i < g_forkers; i++) {
		f[i].id = i;
		if (pthread_create(&th[i], NULL, forker_main, &f[i]) != 0) {
			fprintf(stderr, "fk_prog: pthread_create failed\n");
			return 2;
		}
	}
	if (g_nlibs && pthread_create(&dl, NULL, dlopen_main, NULL) != 0) {
		fprintf(stderr, "fk_prog: pthread_create failed\n");
		return 2;
	}
	for (int i = 0; i < g_forkers; i++)
		pthread_join(th[i], NULL);
	__atomic_store_n(&g_stop_dl, 1, __ATOMIC_RELEASE);
	if (g_nlibs)
		pthread_join(dl, NULL);
	unsigned wrong = et_round_all();
	printf("fk_prog: forks %llu stuck %llu (in dlopen %llu, before it %llu, after it %llu) crashed %llu failed %llu\n",
	       (unsigned long long)g_forks, (unsigned long long)g_stuck, (unsigned long long)g_stuck_in,
	       (unsigned long long)g_stuck_before, (unsigned long long)g_stuck_after, (unsigned long long)g_crashed,
	       (unsigned long long)g_failed);
	if (g_nlibs)
		printf("fk_prog: dlopen/dlclose cycles %llu, %llu wrong results\n", (unsigned long long)g_cycles,
		       (unsigned long long)g_wrong);
	printf("fk_prog: functions: %u, %s\n", bt_exe_count, wrong ? "WRONG results" : "all results right");
	return wrong || g_wrong || g_failed ? 1 : 0;
}
#endif
