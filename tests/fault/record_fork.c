/*
 * record_fork — a forked child keeps its own POSIX timers while the parent
 * records itself with ENORMOUSTEXT_RECORD's CPU-time timers (run under
 * noperf, which makes the library fall back to them; tests/fault/record-fork.sh):
 *
 *   record_fork main|thread
 *
 * The parent spins a little (its timers fire), then forks — from the main
 * thread, or from a second thread (which got its own timer from the
 * library's pthread_create).  The child creates 8 timers of its own (ids
 * start again at 0 in a new process: the ids the parent's timers have),
 * then the forking thread ends (pthread_exit: its thread-specific data's
 * destructors run, as they do for any thread that ends), and another
 * thread of the child checks that every one of its 8 timers still exists.
 * Exit 0 pass, 1 a timer of the child was deleted, 2 usage or set-up.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NT 8
static timer_t g_timers[NT];
static pthread_t g_forker;

__attribute__((noinline)) static unsigned spin(double s)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	double end = (double)t.tv_sec + (double)t.tv_nsec / 1e9 + s;
	unsigned h = 1;
	for (;;) {
		for (int i = 0; i < 10000; i++)
			h = h * 2654435761u + (unsigned)i;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
		if ((double)t.tv_sec + (double)t.tv_nsec / 1e9 >= end)
			return h;
	}
}

/* In the child: waits for the forking thread to end, then looks. */
static void *checker(void *arg)
{
	(void)arg;
	pthread_join(g_forker, NULL);
	int lost = 0;
	for (int i = 0; i < NT; i++) {
		struct itimerspec its;
		if (timer_gettime(g_timers[i], &its) != 0) {
			printf("child: its timer %d (id %ld) is gone: %s\n", i, (long)(intptr_t)g_timers[i],
			       strerror(errno));
			lost++;
		}
	}
	if (!lost)
		printf("child: all %d of its timers are there\n", NT);
	fflush(stdout);
	exit(lost ? 1 : 0);
}

/* The forking thread, in the child. */
static void child(void)
{
	for (int i = 0; i < NT; i++) {
		struct sigevent sev;
		memset(&sev, 0, sizeof sev);
		sev.sigev_notify = SIGEV_NONE;
		if (timer_create(CLOCK_MONOTONIC, &sev, &g_timers[i]) != 0) {
			printf("child: timer_create: %s\n", strerror(errno));
			exit(2);
		}
	}
	g_forker = pthread_self();
	pthread_t c;
	if (pthread_create(&c, NULL, checker, NULL) != 0)
		exit(2);
	pthread_exit(NULL);
}

static int fork_and_wait(void)
{
	fflush(stdout);
	pid_t p = fork();
	if (p < 0)
		return 2;
	if (p == 0)
		child();
	int st;
	if (waitpid(p, &st, 0) != p)
		return 2;
	if (!WIFEXITED(st)) {
		printf("parent: the child died of signal %d\n", WTERMSIG(st));
		return 1;
	}
	return WEXITSTATUS(st);
}

static void *forker(void *arg)
{
	(void)arg;
	spin(0.2);
	return (void *)(intptr_t)fork_and_wait();
}

int main(int argc, char **argv)
{
	if (argc != 2 || (strcmp(argv[1], "main") && strcmp(argv[1], "thread"))) {
		fprintf(stderr, "usage: record_fork main|thread\n");
		return 2;
	}
	spin(0.2);
	int rc;
	if (!strcmp(argv[1], "main")) {
		rc = fork_and_wait();
	} else {
		pthread_t t;
		void *r;
		if (pthread_create(&t, NULL, forker, NULL) != 0 || pthread_join(t, &r) != 0)
			return 2;
		rc = (int)(intptr_t)r;
	}
	printf("parent: the child exited %d\n", rc);
	return rc;
}
