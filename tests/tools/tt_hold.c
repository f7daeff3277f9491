/*
 * tt_hold — the process the tool tests look at: 6 MiB of text (so that
 * whole 2 MiB windows exist wherever it is loaded) and whatever a test needs
 * it to do.
 *
 *   tt_hold [--print-env VAR]... [--wait] [--spin MS] [--exit N]
 *
 *   --print-env VAR  print "VAR=value" (or "VAR unset") on stdout
 *   --wait           print "ready PID" on stdout, then wait for a signal
 *                    (the test's SIGTERM; after 60 s SIGALRM: none is left behind)
 *   --spin MS        with --wait: after "ready", run (call its text) for MS
 *                    ms of wall time before it waits: the library's deferral
 *                    on the program's own thread counts CPU time, and a
 *                    process that only waits never reaches it
 *   --exit N         exit with status N (default 0)
 *
 * The big text is one block of `ret` instructions placed by the assembler:
 * compiles in no time, with any compiler and sanitizer.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

__asm__(".text\n"
        ".p2align 12\n"
        ".globl tt_big_text\n"
        ".type tt_big_text, @function\n"
        "tt_big_text:\n"
        ".skip 6291456, 0xc3\n"
        ".size tt_big_text, 6291456\n");

extern void tt_big_text(void);

int main(int argc, char **argv)
{
	int status = 0;
	int wait = 0;
	long spin_ms = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--print-env") && i + 1 < argc) {
			const char *v = getenv(argv[++i]);
			if (v)
				printf("%s=%s\n", argv[i], v);
			else
				printf("%s unset\n", argv[i]);
		} else if (!strcmp(argv[i], "--exit") && i + 1 < argc) {
			status = atoi(argv[++i]);
		} else if (!strcmp(argv[i], "--spin") && i + 1 < argc) {
			spin_ms = atol(argv[++i]);
		} else if (!strcmp(argv[i], "--wait")) {
			wait = 1;
		} else {
			fprintf(stderr, "tt_hold: unknown argument '%s'\n", argv[i]);
			return 2;
		}
	}
	tt_big_text();   /* the first byte is a `ret`: the text really runs */
	if (wait) {
		printf("ready %ld\n", (long)getpid());
		fflush(stdout);
		alarm(60);
		struct timespec t0, t;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		for (t = t0; (t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < spin_ms;
		     clock_gettime(CLOCK_MONOTONIC, &t))
			tt_big_text();
		for (;;)
			pause();
	}
	fflush(stdout);
	return status;
}
