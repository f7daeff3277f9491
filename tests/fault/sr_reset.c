/*
 * sr_reset HOW — spin 0.3 s of CPU time, set SIGPROF to SIG_DFL the old
 * way HOW names (sysv_signal, bsd_signal or sigset), spin 0.3 s more and
 * print "sr_reset: ok".  Under ENORMOUSTEXT_RECORD's timer (perf refused),
 * a SIGPROF that arrived after the reset would kill the process: the
 * library must stop its timers when any of these sets the disposition.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

typedef void (*handler_t)(int);
extern handler_t bsd_signal(int, handler_t);

static volatile unsigned long sink;

static void spin(double secs)
{
	struct timespec a, b;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
	do {
		for (int i = 0; i < 100000; i++)
			sink += (unsigned long)i * 7;
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
	} while ((double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9 < secs);
}

int main(int argc, char **argv)
{
	const char *how = argc > 1 ? argv[1] : "";
	spin(0.3);
	handler_t r;
	if (!strcmp(how, "sysv_signal"))
		r = sysv_signal(SIGPROF, SIG_DFL);
	else if (!strcmp(how, "bsd_signal"))
		r = bsd_signal(SIGPROF, SIG_DFL);
	else if (!strcmp(how, "sigset"))
		r = sigset(SIGPROF, SIG_DFL);
	else {
		fprintf(stderr, "usage: sr_reset sysv_signal|bsd_signal|sigset\n");
		return 2;
	}
	if (r == SIG_ERR) {
		perror(how);
		return 1;
	}
	spin(0.3);
	printf("sr_reset: ok\n");
	return 0;
}
