/*
 * as_prog — a program that lowers its own RLIMIT_AS after start and then
 * maps as much as the limit lets it (fault.inv-rlimit-as), with 8 MiB of
 * text of its own (the integration tests' generated functions) so that
 * the library has text to move and, with ENORMOUSTEXT_DEFER, a worker.
 *
 *   as_prog [--wait MS] [--after MS] [--n N] [--kib K] [--pace US] [--maps PREFIX]
 *
 *   --wait MS   first call every function, then sleep MS milliseconds
 *               (a worker with a short deferral is done by then)
 *   --after MS  sleep MS milliseconds between setting the limit and mapping
 *               (a worker whose deferral ends meanwhile runs its pass under
 *               the lowered limit)
 *   --n N       the limit is the address space in use now (/proc/self/statm,
 *               its first field: what RLIMIT_AS is checked against) plus N
 *               mappings' worth (default 100)
 *   --kib K     each mapping is K KiB, anonymous, read+write (default 1024)
 *   --pace US   sleep US microseconds before each mapping (a program that
 *               grows over time, while a worker may be moving its text)
 *   --maps P    write /proc/self/maps to P.before (just before the limit is
 *               set) and P.after (after the first mapping that failed)
 *
 * Prints (stdout, nothing else): "mapped M of N" — M is how many fitted, at
 * most 2N — and, on stderr only, the sizes it read.  Exit 0, 1 on an
 * error of its own (setrlimit, statm).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "bigtext.h"

static long vm_pages(void)
{
	char b[128];
	int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, b, sizeof b - 1);
	close(fd);
	if (n <= 0)
		return -1;
	b[n] = 0;
	return strtol(b, NULL, 10);
}

static void copy_maps(const char *prefix, const char *suffix)
{
	char path[4096], buf[8192];
	snprintf(path, sizeof path, "%s.%s", prefix, suffix);
	int in = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	int out = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	ssize_t n;
	while (in >= 0 && out >= 0 && (n = read(in, buf, sizeof buf)) > 0)
		if (write(out, buf, (size_t)n) != n)
			break;
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
}

int main(int argc, char **argv)
{
	int wait_ms = 0, after_ms = 0, n = 100, pace_us = 0;
	long kib = 1024;
	const char *maps = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--wait") && i + 1 < argc)
			wait_ms = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--n") && i + 1 < argc)
			n = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--kib") && i + 1 < argc)
			kib = atol(argv[++i]);
		else if (!strcmp(argv[i], "--after") && i + 1 < argc)
			after_ms = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--pace") && i + 1 < argc)
			pace_us = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--maps") && i + 1 < argc)
			maps = argv[++i];
		else {
			fprintf(stderr, "as_prog: unknown argument '%s'\n", argv[i]);
			return 2;
		}
	}
	unsigned wrong = 0;
	for (unsigned i = 0; i < bt_exe_count; i++) {
		uint64_t x = bt_arg(BT_OBJ_EXE, i);
		wrong += bt_exe_table[i](x) != bt_expect(BT_OBJ_EXE, i, x);
	}
	if (wait_ms > 0) {
		struct timespec t = { wait_ms / 1000, (wait_ms % 1000) * 1000000L };
		while (nanosleep(&t, &t) != 0 && errno == EINTR)
			;
	}
	/* stdio's buffers exist before the measure: printf below allocates nothing new */
	printf("%s", "");
	fprintf(stderr, "%s", "");
	const long page = sysconf(_SC_PAGESIZE);
	const size_t len = (size_t)kib * 1024;
	if (maps)
		copy_maps(maps, "before");
	long before = vm_pages();
	if (before < 0) {
		perror("as_prog: /proc/self/statm");
		return 1;
	}
	struct rlimit rl;
	getrlimit(RLIMIT_AS, &rl);
	rl.rlim_cur = (rlim_t)before * (rlim_t)page + (rlim_t)n * len;
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_cur > rl.rlim_max)
		rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_AS, &rl) != 0) {
		perror("as_prog: setrlimit");
		return 1;
	}
	long set = vm_pages();
	if (after_ms > 0) {
		struct timespec t = { after_ms / 1000, (after_ms % 1000) * 1000000L };
		while (nanosleep(&t, &t) != 0 && errno == EINTR)
			;
	}
	long start = vm_pages();
	int m = 0;
	while (m < 2 * n) {
		if (pace_us > 0) {
			struct timespec t = { pace_us / 1000000, (pace_us % 1000000) * 1000L };
			nanosleep(&t, NULL);
		}
		void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			break;
		m++;
	}
	long after = vm_pages();
	if (maps)
		copy_maps(maps, "after");
	fprintf(stderr, "as_prog: address space %ld kB when measured, limit %ld kB, %ld kB when set, %ld kB when mapping began, %ld kB at the end; %d mapped of %ld kB\n",
		before * page / 1024, (long)(rl.rlim_cur / 1024), set * page / 1024, start * page / 1024,
		after * page / 1024, m, kib);
	printf("mapped %d of %d\n", m, n);
	return wrong ? 1 : 0;
}
