/*
 * jitprog — a small JIT, in the ways real ones make code, for the tests of
 * ENORMOUSTEXT_MODE=2/3 (tests/integration/jit.*.sh):
 *
 *   jitprog PATTERN...
 *
 *   flip     8 MiB mapped read-write, a function written at the start of
 *            every 4 KiB page, then mprotect read+execute (V8-style);
 *   reserve  16 MiB + 64 KiB reserved PROT_NONE; its first 8 MiB made
 *            read-write, written, made read+execute (HotSpot/V8 reserve
 *            first; the size is not a multiple of 2 MiB, so the kernel does
 *            not align it by itself);
 *   grow     16 MiB + 64 KiB reserved PROT_NONE; 8 MiB committed 64 KiB at
 *            a time with mmap(MAP_FIXED, read+write+execute) and written as
 *            it grows (HotSpot's code cache: rwx is the program's choice);
 *   memfd    a 4 MiB memfd mapped twice: a read-write view written, then a
 *            read+execute view the functions are called through (the W^X
 *            double mapping);
 *   toggle   4 MiB written page by page, each page made read-write, written
 *            and made read+execute again (W^X toggling), then every page
 *            toggled once more after the first calls;
 *   churn    50000 small mappings made and unmapped, some made read+execute
 *            (what the wrappers must let through unchanged: results,
 *            errno after a failing call).
 *
 * For each pattern it calls every function and checks what it returns,
 * then prints one line
 *
 *   PATTERN: N functions right, code 0xSTART-0xEND, aligned yes|no, huge KB kB
 *
 * (huge: AnonHugePages + ShmemPmdMapped of the code's mappings, from its
 * own /proc/self/smaps), or "PATTERN: FAIL ..." for a wrong value or a
 * step that failed.  Exit 0 when everything was right, 1 otherwise, 77 on
 * an architecture it cannot write code for.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define STEP 4096u
#define MIB (1024u * 1024u)
#define HUGE (2u * MIB)

static int failures;

static uint32_t value_of(unsigned i)
{
	return (i * 7u + 3u) & 0xffffu;
}

static void emit(unsigned char *p, uint32_t v)
{
#if defined(__x86_64__)
	p[0] = 0xb8;
	memcpy(p + 1, &v, 4);
	p[5] = 0xc3;
#elif defined(__aarch64__)
	uint32_t ins[2] = { 0x52800000u | ((v & 0xffffu) << 5), 0xd65f03c0u };
	memcpy(p, ins, sizeof ins);
#else
	(void)p;
	(void)v;
#endif
}

static void write_code(unsigned char *w, size_t len, unsigned first)
{
	for (size_t off = 0; off < len; off += STEP)
		emit(w + off, value_of(first + (unsigned)(off / STEP)));
	__builtin___clear_cache((char *)w, (char *)w + len);
}

/* Call every function of [x, x + len); how many were right. */
static unsigned call_all(const char *pat, unsigned char *x, size_t len, unsigned first)
{
	unsigned right = 0;
	for (size_t off = 0; off < len; off += STEP) {
		uint32_t (*fn)(void);
		void *p = x + off;
		memcpy(&fn, &p, sizeof fn);
		uint32_t got = fn(), want = value_of(first + (unsigned)(off / STEP));
		if (got == want)
			right++;
		else if (failures++ < 10)
			printf("%s: FAIL function at %p returned %u, expected %u\n", pat, p, got, want);
	}
	return right;
}

/* AnonHugePages + ShmemPmdMapped of the mappings inside [a, b), in kB. */
static unsigned long huge_kb(uintptr_t a, uintptr_t b)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	unsigned long kb = 0, v;
	bool in = false;
	if (!f)
		return 0;
	while (fgets(line, sizeof line, f)) {
		unsigned long s, e;
		if (sscanf(line, "%lx-%lx ", &s, &e) == 2 && strchr(line, '-') < strchr(line, ' ')) {
			in = s >= a && e <= b;
			continue;
		}
		if (in && (sscanf(line, "AnonHugePages: %lu kB", &v) == 1 ||
		           sscanf(line, "ShmemPmdMapped: %lu kB", &v) == 1))
			kb += v;
	}
	fclose(f);
	return kb;
}

static void say(const char *pat, unsigned right, unsigned want, unsigned char *x, size_t len)
{
	uintptr_t a = (uintptr_t)x;
	if (right != want) {
		printf("%s: FAIL %u of %u functions right\n", pat, right, want);
		failures++;
	}
	printf("%s: %u functions right, code %#lx-%#lx, aligned %s, huge %lu kB\n", pat, right,
	       (unsigned long)a, (unsigned long)(a + len), a % HUGE ? "no" : "yes",
	       huge_kb(a & ~(uintptr_t)(HUGE - 1), (a + len + HUGE - 1) & ~(uintptr_t)(HUGE - 1)));
	fflush(stdout);
}

static int step_failed(const char *pat, const char *what)
{
	printf("%s: FAIL %s: %s\n", pat, what, strerror(errno));
	failures++;
	return -1;
}

static int flip(void)
{
	size_t len = 8 * MIB;
	unsigned char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return step_failed("flip", "mmap");
	write_code(m, len, 0);
	if (mprotect(m, len, PROT_READ | PROT_EXEC) != 0)
		return step_failed("flip", "mprotect");
	say("flip", call_all("flip", m, len, 0), len / STEP, m, len);
	return 0;
}

static int reserve(void)
{
	size_t res = 16 * MIB + 64 * 1024, len = 8 * MIB;
	unsigned char *m = mmap(NULL, res, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m == MAP_FAILED)
		return step_failed("reserve", "mmap");
	if (mprotect(m, len, PROT_READ | PROT_WRITE) != 0)
		return step_failed("reserve", "mprotect rw");
	write_code(m, len, 100000);
	if (mprotect(m, len, PROT_READ | PROT_EXEC) != 0)
		return step_failed("reserve", "mprotect rx");
	say("reserve", call_all("reserve", m, len, 100000), len / STEP, m, len);
	return 0;
}

static int grow(void)
{
	size_t res = 16 * MIB + 64 * 1024, len = 8 * MIB, chunk = 64 * 1024;
	unsigned char *m = mmap(NULL, res, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m == MAP_FAILED)
		return step_failed("grow", "mmap");
	for (size_t at = 0; at < len; at += chunk) {
		if (mmap(m + at, chunk, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
		         -1, 0) != m + at)
			return step_failed("grow", "mmap MAP_FIXED");
		write_code(m + at, chunk, 50000 + (unsigned)(at / STEP));
	}
	say("grow", call_all("grow", m, len, 50000), len / STEP, m, len);
	return 0;
}

static int memfd(void)
{
	size_t len = 4 * MIB;
	int fd = memfd_create("jitprog", MFD_CLOEXEC);
	if (fd < 0)
		return step_failed("memfd", "memfd_create");
	if (ftruncate(fd, (off_t)len) != 0)
		return step_failed("memfd", "ftruncate");
	unsigned char *w = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (w == MAP_FAILED)
		return step_failed("memfd", "mmap rw");
	write_code(w, len, 300000);
	unsigned char *x = mmap(NULL, len, PROT_READ | PROT_EXEC, MAP_SHARED, fd, 0);
	if (x == MAP_FAILED)
		return step_failed("memfd", "mmap rx");
	__builtin___clear_cache((char *)x, (char *)x + len);
	unsigned right = call_all("memfd", x, len, 300000);
	/* written through the other view after the calls: the code view sees it */
	emit(w, 4242);
	__builtin___clear_cache((char *)x, (char *)x + 16);
	uint32_t (*fn)(void);
	void *p = x;
	memcpy(&fn, &p, sizeof fn);
	if (fn() != 4242) {
		printf("memfd: FAIL the code view does not see a write through the data view\n");
		failures++;
	}
	emit(w, value_of(300000));
	__builtin___clear_cache((char *)x, (char *)x + 16);
	say("memfd", right, len / STEP, x, len);
	close(fd);
	return 0;
}

static int toggle(void)
{
	size_t len = 4 * MIB;
	unsigned char *m = mmap(NULL, len, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return step_failed("toggle", "mmap");
	for (int round = 0; round < 2; round++) {
		for (size_t off = 0; off < len; off += STEP) {
			if (mprotect(m + off, STEP, PROT_READ | PROT_WRITE) != 0)
				return step_failed("toggle", "mprotect rw");
			write_code(m + off, STEP, 400000 + (unsigned)(off / STEP));
			if (mprotect(m + off, STEP, PROT_READ | PROT_EXEC) != 0)
				return step_failed("toggle", "mprotect rx");
		}
		if (round == 0 && call_all("toggle", m, len, 400000) != len / STEP)
			return -1;
	}
	say("toggle", call_all("toggle", m, len, 400000), len / STEP, m, len);
	return 0;
}

static int churn(void)
{
	unsigned n = 0;
	for (unsigned i = 0; i < 50000; i++) {
		size_t len = (size_t)(1 + i % 16) * STEP;
		int prot = i % 8 == 0 ? PROT_READ | PROT_EXEC : PROT_READ | PROT_WRITE;
		unsigned char *m = mmap(NULL, len, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED)
			return step_failed("churn", "mmap");
		if (prot & PROT_WRITE)
			m[0] = 1;
		if (munmap(m, len) != 0)
			return step_failed("churn", "munmap");
		n++;
	}
	/* a call that fails leaves its own errno */
	errno = 0;
	void *bad = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 4095);
	int e1 = errno;
	errno = 0;
	int r = mprotect((void *)4096, 4096, PROT_READ | PROT_EXEC);
	int e2 = errno;
	if (bad != MAP_FAILED || e1 != EINVAL || r != -1 || (e2 != ENOMEM && e2 != EINVAL)) {
		printf("churn: FAIL a failing call: mmap %p errno %d, mprotect %d errno %d\n", bad, e1, r, e2);
		failures++;
	}
	/* a call that succeeds leaves errno as it was */
	errno = 1234;
	void *ok = mmap(NULL, 4 * MIB, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (ok == MAP_FAILED || errno != 1234) {
		printf("churn: FAIL a successful mmap changed errno to %d\n", errno);
		failures++;
	}
	printf("churn: %u mappings made and unmapped, errno kept\n", n);
	return 0;
}

int main(int argc, char **argv)
{
#if !defined(__x86_64__) && !defined(__aarch64__)
	printf("jitprog: cannot write code for this architecture\n");
	return 77;
#endif
	for (int i = 1; i < argc; i++) {
		const char *p = argv[i];
		int r = !strcmp(p, "flip") ? flip() : !strcmp(p, "reserve") ? reserve() : !strcmp(p, "grow") ? grow()
		      : !strcmp(p, "memfd") ? memfd() : !strcmp(p, "toggle") ? toggle()
		      : !strcmp(p, "churn") ? churn() : (printf("jitprog: no pattern '%s'\n", p), -2);
		if (r == -2)
			return 2;
	}
	return failures ? 1 : 0;
}
