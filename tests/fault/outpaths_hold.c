/*
 * outpaths_hold — a process whose text the library moves, held alive for
 * `enormoustext perfmap PID` (tests/fault/outpaths-*.sh):
 *
 *   outpaths_hold     print "ready PID" on stdout once started, then wait
 *                     for a signal (the test's SIGTERM; SIGALRM after 60 s,
 *                     so that none is left behind)
 *
 * 6 MiB of `ret` instructions placed by the assembler give whole 2 MiB
 * windows wherever it is loaded, and one function (op_big_text) in them.
 */
#include <stdio.h>
#include <unistd.h>

__asm__(".text\n"
        ".p2align 12\n"
        ".globl op_big_text\n"
        ".type op_big_text, @function\n"
        "op_big_text:\n"
        ".skip 6291456, 0xc3\n"
        ".size op_big_text, 6291456\n");

extern void op_big_text(void);

int main(void)
{
	op_big_text();
	printf("ready %ld\n", (long)getpid());
	fflush(stdout);
	alarm(60);
	pause();
	return 0;
}
