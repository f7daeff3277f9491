/*
 * wx_toggle — a JIT's W^X page toggling: write code while a page is
 * read-write, make it read+execute, run it, make it read-write again.  The
 * program of fault.inv-wx-toggle: with ENORMOUSTEXT_MODE=2 or 3 the library
 * sees every mprotect to executable (and advises the range), and must leave
 * the program no more mappings than it has without the library — nor make
 * an mprotect fail that would have succeeded.
 *
 *   wx_toggle [--mib N] [--toggles N] [--checkpoint N] [--windows N] [--rounds N]
 *
 *   pages    a region of N MiB (default 256), mapped read-write (no
 *            alignment asked for): every other page, one after the other
 *            (and round again when all were done), gets code written
 *            (mov $k, %eax; ret), is made PROT_READ|PROT_EXEC, called (on
 *            x86-64), and made PROT_READ|PROT_WRITE again: --toggles of
 *            them (default 40,000: more than vm.max_map_count / 2 pages,
 *            so a program left with a mapping per page runs out of them).
 *            The mapping count (lines of /proc/self/maps) after
 *            --checkpoint toggles (default 1,000) and at the end, as the
 *            difference from the count before the first toggle.
 *   windows  a 2 MiB-aligned region of --windows 2 MiB windows (default
 *            16): every other whole window written, made RX, called, made
 *            RW again, --rounds times (default 4); the difference again.
 *
 * Prints (stdout; the counts before are printed apart, as 'base', since
 * they depend on what else is mapped):
 *   wx_toggle: pages: after T toggles: mappings +D
 *   wx_toggle: pages: T toggles, every mprotect succeeded, every call right
 *   wx_toggle: pages: FAILED: mprotect RX #T: <error>   (and it stops there)
 *   wx_toggle: windows: after T toggles: mappings +D
 *   ...
 * Exit 0 when every mprotect succeeded and every call returned right, 1
 * when not, 2 on bad usage or when the regions cannot be mapped.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define WIN (2u << 20)

static long g_page;

static long maps_count(void)
{
	FILE *f = fopen("/proc/self/maps", "re");
	if (!f)
		return -1;
	long n = 0;
	int c;
	while ((c = getc(f)) != EOF)
		n += c == '\n';
	fclose(f);
	return n;
}

/* mov $k, %eax; ret  (other architectures: the bytes are written, not run) */
static void write_code(unsigned char *p, uint32_t k)
{
	p[0] = 0xb8;
	memcpy(p + 1, &k, 4);
	p[5] = 0xc3;
}

static int run_code(unsigned char *p, uint32_t k)
{
#if defined(__x86_64__) || defined(__i386__)
	uint32_t (*fn)(void) = (uint32_t (*)(void))(uintptr_t)p;
	return fn() == k;
#else
	(void)p;
	(void)k;
	return 1;
#endif
}

/* One toggle of [p, p + len): code in, RX, run, RW.  0, or 1 (said). */
static int toggle(const char *what, unsigned char *p, size_t len, unsigned long n, uint32_t k, unsigned *wrong)
{
	write_code(p, k);
	if (len > (size_t)g_page)
		write_code(p + len - 6, k);   /* something written at both ends of a window */
	if (mprotect(p, len, PROT_READ | PROT_EXEC) != 0) {
		printf("wx_toggle: %s: FAILED: mprotect RX #%lu: %s\n", what, n, strerror(errno));
		return 1;
	}
	*wrong += !run_code(p, k);
	if (mprotect(p, len, PROT_READ | PROT_WRITE) != 0) {
		printf("wx_toggle: %s: FAILED: mprotect RW #%lu: %s\n", what, n, strerror(errno));
		return 1;
	}
	return 0;
}

static void say(const char *what, unsigned long n, long base)
{
	long m = maps_count();
	printf("wx_toggle: %s: after %lu toggles: mappings %+ld\n", what, n, m - base);
	fprintf(stderr, "wx_toggle: %s: after %lu toggles: %ld mappings (%ld before)\n", what, n, m, base);
}

int main(int argc, char **argv)
{
	unsigned long mib = 256, toggles = 40000, checkpoint = 1000, windows = 16, rounds = 4;
	for (int i = 1; i < argc; i++) {
		unsigned long *v = NULL;
		if (!strcmp(argv[i], "--mib"))
			v = &mib;
		else if (!strcmp(argv[i], "--toggles"))
			v = &toggles;
		else if (!strcmp(argv[i], "--checkpoint"))
			v = &checkpoint;
		else if (!strcmp(argv[i], "--windows"))
			v = &windows;
		else if (!strcmp(argv[i], "--rounds"))
			v = &rounds;
		if (!v || i + 1 >= argc) {
			fprintf(stderr, "usage: wx_toggle [--mib N] [--toggles N] [--checkpoint N] [--windows N] [--rounds N]\n");
			return 2;
		}
		*v = strtoul(argv[++i], NULL, 10);
	}
	g_page = sysconf(_SC_PAGESIZE);
	setvbuf(stdout, NULL, _IOLBF, 0);
	int bad = 0;
	unsigned wrong = 0;

	/* ---- page by page ---- */
	size_t len = (size_t)mib << 20;
	unsigned long npages = len / (size_t)g_page / 2;
	unsigned char *a = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (a == MAP_FAILED || !npages) {
		perror("wx_toggle: mmap");
		return 2;
	}
	long base = maps_count();
	unsigned long n = 0;
	while (n < toggles) {
		unsigned char *p = a + (size_t)(n % npages) * 2 * (size_t)g_page;
		n++;
		if (toggle("pages", p, (size_t)g_page, n, (uint32_t)n, &wrong)) {
			bad = 1;
			break;
		}
		if (n == checkpoint && n < toggles)
			say("pages", n, base);
	}
	say("pages", n, base);
	if (!bad)
		printf("wx_toggle: pages: %lu toggles, every mprotect succeeded, %s\n", n,
		       wrong ? "some calls WRONG" : "every call right");
	munmap(a, len);

	/* ---- whole 2 MiB windows, in a 2 MiB-aligned region ---- */
	size_t wlen = (size_t)windows * WIN;
	if (windows) {
		unsigned char *q = mmap(NULL, wlen + WIN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (q == MAP_FAILED) {
			perror("wx_toggle: mmap");
			return 2;
		}
		uintptr_t qa = ((uintptr_t)q + WIN - 1) & ~(uintptr_t)(WIN - 1);
		if (qa > (uintptr_t)q)
			munmap(q, qa - (uintptr_t)q);
		if ((uintptr_t)q + wlen + WIN > qa + wlen)
			munmap((void *)(qa + wlen), (uintptr_t)q + wlen + WIN - (qa + wlen));
		unsigned char *b = (unsigned char *)qa;
		base = maps_count();
		unsigned long m = 0;
		int wbad = 0;
		for (unsigned long r = 0; r < rounds && !wbad; r++)
			for (unsigned long w = 0; w < windows && !wbad; w += 2) {
				m++;
				wbad = toggle("windows", b + w * WIN, WIN, m, (uint32_t)(m + 7), &wrong);
			}
		say("windows", m, base);
		if (!wbad)
			printf("wx_toggle: windows: %lu toggles, every mprotect succeeded, %s\n", m,
			       wrong ? "some calls WRONG" : "every call right");
		bad |= wbad;
		munmap(b, wlen);
	}
	return bad || wrong ? 1 : 0;
}
