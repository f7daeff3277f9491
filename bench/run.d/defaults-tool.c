/*
 * defaults-tool — the two things bench/run's `defaults` suite needs that a
 * shell does badly.
 *
 *   defaults-tool sample MS ROOT
 *       every MS milliseconds, until process ROOT has gone (or is a
 *       zombie), sums over ROOT's descendants (not ROOT itself: runstat or
 *       runuser) the executable mappings of /proc/PID/smaps: Size, Pss and
 *       AnonHugePages + FilePmdMapped.  Prints one line at the end:
 *       "peak_pss_kib huge_kib size_kib max_share_pct procs samples rss_kib":
 *       the largest Pss sum seen, the huge bytes and size of the same
 *       sample, the largest huge share (huge / size) of any sample, the
 *       most processes seen at once, the number of samples taken, and the
 *       resident text (Rss) of the largest-Pss sample: text a process never
 *       touched is not mapped at all, small or huge, so huge / Rss is the
 *       share of the text it runs that is on huge pages.
 *       (smaps_rollup has no per-mapping split: text only needs smaps.)
 *   defaults-tool drop FILE...
 *       drops each file's clean, unmapped pages from the page cache
 *       (POSIX_FADV_DONTNEED): "as after a boot" for these files only,
 *       where `echo 1 > /proc/sys/vm/drop_caches` would drop everyone's.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAXP 4096

static int npids;
static int pids[MAXP];

static int seen(int p)
{
	for (int i = 0; i < npids; i++)
		if (pids[i] == p)
			return 1;
	return 0;
}

/* the descendants of p, through every thread's children list */
static void collect(int p)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/task", p);
	DIR *d = opendir(path);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char cp[320];
		snprintf(cp, sizeof cp, "/proc/%d/task/%s/children", p, e->d_name);
		FILE *f = fopen(cp, "r");
		if (!f)
			continue;
		int c;
		while (fscanf(f, "%d", &c) == 1) {
			if (npids < MAXP && !seen(c)) {
				pids[npids++] = c;
				collect(c);
			}
		}
		fclose(f);
	}
	closedir(d);
}

/* adds PID's executable mappings to the sums; 0 when it has none (gone) */
static int text_of(int p, long *size, long *pss, long *huge, long *rss)
{
	char path[64], line[512];
	snprintf(path, sizeof path, "/proc/%d/smaps", p);
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	int x = 0, any = 0;
	long v;
	while (fgets(line, sizeof line, f)) {
		char perm[8];
		unsigned long a, b;
		if (sscanf(line, "%lx-%lx %7s", &a, &b, perm) == 3) {
			x = perm[2] == 'x';
			continue;
		}
		if (!x)
			continue;
		if (sscanf(line, "Size: %ld", &v) == 1) {
			*size += v;
			any = 1;
		} else if (sscanf(line, "Pss: %ld", &v) == 1)
			*pss += v;
		else if (sscanf(line, "Rss: %ld", &v) == 1)
			*rss += v;
		else if (sscanf(line, "AnonHugePages: %ld", &v) == 1 || sscanf(line, "FilePmdMapped: %ld", &v) == 1)
			*huge += v;
	}
	fclose(f);
	return any;
}

static int alive(int p)
{
	char path[64], buf[256];
	snprintf(path, sizeof path, "/proc/%d/stat", p);
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	char *r = strrchr(buf, ')');
	return r && r[1] == ' ' && r[2] != 'Z' && r[2] != 'X';
}

static volatile sig_atomic_t stop;
static void on_term(int s) { (void)s; stop = 1; }

static int sample(int ms, int root)
{
	long best_pss = 0, best_huge = 0, best_size = 0, best_rss = 0;
	double best_share = 0;
	int most = 0, samples = 0;
	signal(SIGTERM, on_term);
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	while (!stop && alive(root)) {
		npids = 0;
		collect(root);
		long size = 0, pss = 0, huge = 0, rss = 0;
		int n = 0;
		for (int i = 0; i < npids; i++)
			n += text_of(pids[i], &size, &pss, &huge, &rss);
		if (n > 0) {
			samples++;
			if (pss > best_pss) {
				best_pss = pss;
				best_huge = huge;
				best_size = size;
				best_rss = rss;
			}
			if (size > 0 && (double)huge / (double)size > best_share)
				best_share = (double)huge / (double)size;
			if (n > most)
				most = n;
		}
		nanosleep(&ts, NULL);
	}
	printf("%ld %ld %ld %.1f %d %d %ld\n", best_pss, best_huge, best_size, 100 * best_share, most, samples, best_rss);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 4 && !strcmp(argv[1], "sample"))
		return sample(atoi(argv[2]) > 0 ? atoi(argv[2]) : 1, atoi(argv[3]));
	if (argc >= 2 && !strcmp(argv[1], "drop")) {
		int rc = 0;
		for (int i = 2; i < argc; i++) {
			int fd = open(argv[i], O_RDONLY);
			if (fd < 0 || posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) != 0) {
				perror(argv[i]);
				rc = 1;
			}
			if (fd >= 0)
				close(fd);
		}
		return rc;
	}
	fprintf(stderr, "usage: defaults-tool sample MS ROOTPID | drop FILE...\n");
	return 2;
}
