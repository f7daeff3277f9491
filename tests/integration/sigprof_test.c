/*
 * sigprof_test — a program that lives with ENORMOUSTEXT_RECORD's timer
 * (SIGPROF), run by record.timer.sh under a filter that refuses
 * perf_event_open:
 *
 *   sigprof_test --blocked-worker S   a thread that blocks every signal
 *                 spins for S seconds of CPU while the main thread sleeps
 *                 in nanosleep: the sleep must not be interrupted (EINTR)
 *   sigprof_test --reset S            spins S/2 s, sets SIGPROF to SIG_DFL,
 *                 spins S/2 s more: must not be killed by a SIGPROF
 *   sigprof_test --own-handler S      installs its own SIGPROF handler after
 *                 S/2 s of spinning, spins S/2 s more: the handler must not
 *                 see the library's timer signals (at most one in flight)
 *   sigprof_test --dlopen S LIB...    loads each LIB (the same file under
 *                 two paths, say), then spins S seconds
 *
 * The spinning happens in spin_here().  Exit 0 pass, 1 fail, 2 usage.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

__attribute__((noinline)) unsigned spin_here(unsigned h)
{
	for (int i = 0; i < 1000; i++)
		h = h * 2654435761u + (unsigned)i;
	return h;
}

static double cpu_now(clockid_t c)
{
	struct timespec t;
	clock_gettime(c, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* spin for `s` seconds of this thread's CPU time */
static unsigned spin_for(double s)
{
	unsigned h = 1;
	double end = cpu_now(CLOCK_THREAD_CPUTIME_ID) + s;
	while (cpu_now(CLOCK_THREAD_CPUTIME_ID) < end)
		h = spin_here(h);
	return h;
}

static double g_secs;
static volatile sig_atomic_t g_own;

static void *blocked_worker(void *arg)
{
	(void)arg;
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	return (void *)(uintptr_t)(spin_for(g_secs) | 1);
}

static void own_handler(int sig)
{
	(void)sig;
	g_own++;
}

int main(int argc, char **argv)
{
	if (argc < 3 || (g_secs = atof(argv[2])) <= 0) {
		fprintf(stderr, "usage: sigprof_test --blocked-worker|--reset|--own-handler SECONDS\n"
		                "       sigprof_test --dlopen SECONDS LIB...\n");
		return 2;
	}
	if (!strcmp(argv[1], "--dlopen")) {
		for (int i = 3; i < argc; i++)
			if (!dlopen(argv[i], RTLD_NOW | RTLD_LOCAL)) {
				fprintf(stderr, "sigprof_test: %s\n", dlerror());
				return 1;
			}
		printf("sigprof_test: %d librar%s loaded (%u)\n", argc - 3, argc == 4 ? "y" : "ies", spin_for(g_secs) & 1);
		return 0;
	}
	if (!strcmp(argv[1], "--blocked-worker")) {
		pthread_t t;
		if (pthread_create(&t, NULL, blocked_worker, NULL) != 0) {
			fprintf(stderr, "sigprof_test: pthread_create failed\n");
			return 1;
		}
		struct timespec d = { (time_t)g_secs + 1, 0 };
		int r = nanosleep(&d, NULL);
		int e = errno;
		pthread_join(t, NULL);
		if (r != 0) {
			printf("sigprof_test: nanosleep in the main thread: %s\n", strerror(e));
			return 1;
		}
		printf("sigprof_test: the main thread slept undisturbed while the worker spun\n");
		return 0;
	}
	if (!strcmp(argv[1], "--reset")) {
		unsigned h = spin_for(g_secs / 2);
		signal(SIGPROF, SIG_DFL);
		h ^= spin_for(g_secs / 2);
		printf("sigprof_test: alive after SIGPROF reset to SIG_DFL (%u)\n", h & 1);
		return 0;
	}
	if (!strcmp(argv[1], "--own-handler")) {
		unsigned h = spin_for(g_secs / 2);
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = own_handler;
		sigaction(SIGPROF, &sa, NULL);
		h ^= spin_for(g_secs / 2);
		printf("sigprof_test: own SIGPROF handler called %d time(s) (%u)\n", (int)g_own, h & 1);
		return g_own <= 1 ? 0 : 1;
	}
	fprintf(stderr, "sigprof_test: unknown mode %s\n", argv[1]);
	return 2;
}
