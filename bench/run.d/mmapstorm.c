/*
 * mmapstorm — what interposing mmap and mprotect costs a program that maps
 * memory all the time (an allocator, a runtime with many arenas): ROUNDS
 * rounds of small anonymous read-write mappings (4 to 64 KiB: mmap, one
 * byte written, mprotect read-only and back, munmap), every 64th round a
 * large one as well (16 MiB: mmap, one page written, mprotect of its first
 * half, munmap), and apart from those, ROUNDS / 8 rounds of what a JIT
 * does with a small buffer (mmap read-write, a byte written, mprotect
 * read-execute, munmap).  Each part is timed inside the process.
 *
 *   mmapstorm [ROUNDS]          (default 20000)
 *
 * Prints one line: "calls N seconds S ns_per_call X
 * jit_calls N2 jit_seconds S2 jit_ns_per_call X2 checksum C".
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void die(const char *what)
{
	perror(what);
	exit(1);
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? strtol(argv[1], NULL, 10) : 20000;
	if (rounds < 1) {
		fprintf(stderr, "mmapstorm: ROUNDS must be a positive number, not '%s'\n", argv[1]);
		return 2;
	}
	const size_t big = (size_t)16 << 20;
	uint64_t sum = 0, calls = 0, jcalls = 0;
	double t0 = now();
	for (long r = 0; r < rounds; r++) {
		size_t len = (size_t)4096 << (r & 4 ? 4 : r & 3);    /* 4, 8, 16, 32 or 64 KiB */
		char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			die("mmap");
		p[len - 1] = (char)r;
		if (mprotect(p, len, PROT_READ) || mprotect(p, len, PROT_READ | PROT_WRITE))
			die("mprotect");
		sum += (unsigned char)p[len - 1];
		if (munmap(p, len))
			die("munmap");
		calls += 4;
		if ((r & 63) == 0) {
			char *q = mmap(NULL, big, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (q == MAP_FAILED)
				die("mmap (large)");
			q[big / 2] = 1;
			if (mprotect(q, big / 2, PROT_READ))
				die("mprotect (large)");
			sum += (unsigned char)q[big / 2];
			if (munmap(q, big))
				die("munmap (large)");
			calls += 3;
		}
	}
	double t1 = now();
	for (long r = 0; r < rounds / 8; r++) {
		size_t len = (size_t)4096 << (r & 3);
		unsigned char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			die("mmap (jit)");
		p[0] = 0xc3;    /* ret */
		if (mprotect(p, len, PROT_READ | PROT_EXEC))
			die("mprotect (jit)");
		sum += p[0];
		if (munmap(p, len))
			die("munmap (jit)");
		jcalls += 3;
	}
	double t2 = now();
	printf("calls %llu seconds %.4f ns_per_call %.1f jit_calls %llu jit_seconds %.4f jit_ns_per_call %.1f checksum %llu\n",
	       (unsigned long long)calls, t1 - t0, (t1 - t0) * 1e9 / (double)calls,
	       (unsigned long long)jcalls, t2 - t1, jcalls ? (t2 - t1) * 1e9 / (double)jcalls : 0.0,
	       (unsigned long long)sum);
	return 0;
}
