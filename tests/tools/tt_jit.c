/*
 * tt_jit — a tiny JIT for the tests of `enormoustext collapse`:
 *
 *   tt_jit [--wait]
 *
 * Maps 8 MiB of anonymous memory read-write (not asked for huge pages:
 * under THP `madvise` it stays on 4 KiB pages), writes a small function at
 * the start of every 4 KiB page (x86-64 `mov eax, imm32; ret`, aarch64
 * `mov w0, #imm; ret`), makes the whole mapping read+execute (it is never
 * writable and executable at once), calls every function and checks what
 * it returns.  Then it prints
 *
 *   code 0xSTART 0xEND FUNCTIONS
 *   ready PID
 *
 * and, with --wait, waits: for SIGUSR1, SIGTERM, SIGINT or SIGHUP, or for
 * the end of stdin when stdin is a pipe, a FIFO or a terminal.  SIGUSR2
 * adds a JIT region (4 MiB more, made the same way: a code cache that
 * grows) and prints its `code` line, then waits again.  Afterwards it
 * calls every function of every region again and checks the results (they
 * must be right after a collapse from outside), prints
 *
 *   checked N functions: all right
 *
 * and exits 0; 1 when a function returned a wrong value (each named), 2
 * when a step failed (mmap, mprotect), 77 on an architecture it cannot
 * write code for.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE     /* ppoll */
#endif
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define REGION (8u << 20)
#define GROW (4u << 20)
#define STEP 4096u
#define MAX_REGIONS 16

struct region {
	unsigned char *base;
	size_t len;
	unsigned first;        /* index of its first function */
};

static struct region regions[MAX_REGIONS];
static unsigned nregions;
static volatile sig_atomic_t got_signal;

static uint32_t value_of(unsigned i)
{
	/* distinct in the low 16 bits (aarch64 movz takes 16) */
	return (i * 7u + 3u) & 0xffffu;
}

/* One function at p returning v; its length. */
static size_t emit(unsigned char *p, uint32_t v)
{
#if defined(__x86_64__) || defined(__i386__)
	p[0] = 0xb8;                    /* mov eax, imm32 */
	memcpy(p + 1, &v, 4);
	p[5] = 0xc3;                    /* ret */
	return 6;
#elif defined(__aarch64__)
	uint32_t ins[2] = { 0x52800000u | ((v & 0xffffu) << 5), 0xd65f03c0u };  /* movz w0, #v; ret */
	memcpy(p, ins, sizeof ins);
	return sizeof ins;
#else
	(void)p;
	(void)v;
	return 0;
#endif
}

static int make_region(size_t len)
{
	if (nregions == MAX_REGIONS) {
		fprintf(stderr, "tt_jit: at most %d regions\n", MAX_REGIONS);
		return -1;
	}
	unsigned char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED) {
		fprintf(stderr, "tt_jit: mmap %zu bytes: %s\n", len, strerror(errno));
		return -1;
	}
	struct region *r = &regions[nregions];
	r->base = m;
	r->len = len;
	r->first = nregions ? regions[nregions - 1].first + (unsigned)(regions[nregions - 1].len / STEP) : 0;
	for (size_t off = 0; off < len; off += STEP)
		emit(m + off, value_of(r->first + (unsigned)(off / STEP)));
	__builtin___clear_cache((char *)m, (char *)m + len);
	if (mprotect(m, len, PROT_READ | PROT_EXEC) != 0) {
		fprintf(stderr, "tt_jit: mprotect: %s\n", strerror(errno));
		return -1;
	}
	nregions++;
	printf("code %p %p %zu\n", (void *)m, (void *)(m + len), len / STEP);
	fflush(stdout);
	return 0;
}

/* Call every function; how many returned a wrong value. */
static unsigned check_all(unsigned *count)
{
	unsigned bad = 0;
	*count = 0;
	for (unsigned k = 0; k < nregions; k++) {
		for (size_t off = 0; off < regions[k].len; off += STEP) {
			uint32_t (*fn)(void);
			void *p = regions[k].base + off;
			memcpy(&fn, &p, sizeof fn);
			unsigned i = regions[k].first + (unsigned)(off / STEP);
			uint32_t got = fn(), want = value_of(i);
			if (got != want) {
				if (bad < 20)
					printf("function %u at %p returned %u, expected %u\n", i, p, got, want);
				bad++;
			}
			(*count)++;
		}
	}
	return bad;
}

static void on_signal(int sig)
{
	got_signal = sig;
}

int main(int argc, char **argv)
{
	int wait_mode = argc > 1 && !strcmp(argv[1], "--wait");
	if (emit((unsigned char[8]){ 0 }, 0) == 0) {
		printf("tt_jit: cannot write machine code for this architecture\n");
		return 77;
	}
	/* The signals are blocked but while waiting (ppoll): none is lost
	 * between two waits. */
	sigset_t block, none;
	sigemptyset(&block);
	sigemptyset(&none);
	int sigs[] = { SIGUSR1, SIGUSR2, SIGTERM, SIGINT, SIGHUP };
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) {
		sigaddset(&block, sigs[i]);
		sigaction(sigs[i], &sa, NULL);
	}
	sigprocmask(SIG_BLOCK, &block, NULL);

	if (make_region(REGION) != 0)
		return 2;
	unsigned n, bad = check_all(&n);
	if (bad) {
		printf("checked %u functions before waiting: %u wrong\n", n, bad);
		return 1;
	}
	printf("ready %ld\n", (long)getpid());
	fflush(stdout);

	struct stat st;
	int watch_stdin = fstat(0, &st) == 0 && (S_ISFIFO(st.st_mode) || isatty(0));
	while (wait_mode) {
		struct pollfd pfd = { .fd = watch_stdin ? 0 : -1, .events = POLLIN };
		int r = ppoll(&pfd, 1, NULL, &none);
		if (r > 0 && (pfd.revents & (POLLIN | POLLHUP))) {
			char buf[256];
			ssize_t got = read(0, buf, sizeof buf);
			if (got <= 0)
				break;          /* end of stdin */
			continue;
		}
		if (r < 0 && errno != EINTR)
			break;
		if (got_signal == SIGUSR2) {
			got_signal = 0;
			if (make_region(GROW) != 0)
				return 2;
			continue;
		}
		if (got_signal)
			break;
	}

	bad = check_all(&n);
	if (bad) {
		printf("checked %u functions: %u wrong\n", n, bad);
		return 1;
	}
	printf("checked %u functions: all right\n", n);
	return 0;
}
