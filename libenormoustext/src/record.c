/*
 * record.c — ENORMOUSTEXT_RECORD=FILE: a profile of this very process, for
 * programs started some other way than `enormoustext record` (a service,
 * a program run by another program).
 *
 * At start-up: one perf_event_open software cpu-clock event per CPU on
 * this process, inherited by the threads it starts, removed at exec (Linux
 * 5.13+), user-space samples only, each with its own ring buffer.  No
 * thread, no signal: the samples wait in the buffers (a full buffer drops
 * the newest, and the profile says how many were lost).  At exit (the
 * library's destructor): the samples of this process are attributed to
 * the objects loaded then, by address — text the library moved is found
 * just as well — and written as a profile (FILE beside, renamed into place;
 * %p is the process id).  Without perf_event_open (refused, or too old a
 * kernel) nothing is recorded, and one line says so.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "internal.h"

/* musl-gcc's default include path has no kernel headers: such a build
 * cannot record, and says so when asked. */
#if defined(__has_include)
#if __has_include(<linux/perf_event.h>)
#define ET_HAVE_PERF 1
#endif
#endif

#ifndef ET_HAVE_PERF
void et_record_start(const char *tmpl)
{
	et_log(0, "ENORMOUSTEXT_RECORD=%s: this build of the library has no perf_event support "
	       "(no <linux/perf_event.h> when it was built): nothing recorded", tmpl);
}

void et_record_forget(void)
{
}
#else

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <pthread.h>

#include "perf_attr.h"
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define REC_GRANULE 64u
#define REC_MAX_CPUS 256

struct rring {
	int fd;
	struct perf_event_mmap_page *meta;
	size_t len;
};

static struct rring g_rings[REC_MAX_CPUS];
static int g_nrings;
static char g_path[1024];
static pid_t g_pid;
static bool g_on;

void et_record_forget(void)
{
	g_on = false;     /* the buffers are the parent's (inherited mappings) */
}

void et_record_start(const char *tmpl)
{
	if (g_on || et_expand_path(tmpl, g_path, sizeof g_path) != 0)
		return;
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	long pg = sysconf(_SC_PAGESIZE);
	if (ncpu < 1)
		ncpu = 1;
	if (ncpu > REC_MAX_CPUS)
		ncpu = REC_MAX_CPUS;
	if (pg <= 0)
		pg = 4096;
	int err = 0;
	for (long cpu = 0; cpu < ncpu; cpu++) {
		struct perf_event_attr a;
		et_cpu_clock_attr(&a, 999);
		a.remove_on_exec = 1;
		long fd = syscall(SYS_perf_event_open, &a, 0, (int)cpu, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd < 0 && errno == EINVAL) {
			a.remove_on_exec = 0;     /* before Linux 5.13 */
			fd = syscall(SYS_perf_event_open, &a, 0, (int)cpu, -1, PERF_FLAG_FD_CLOEXEC);
		}
		if (fd < 0) {
			if (errno == ENODEV || errno == ENOENT)
				continue;             /* an offline CPU */
			err = errno;
			break;
		}
		/* 1 MiB a CPU (about 40,000 samples), less where the locked-memory
		 * limit for perf buffers says so */
		void *m = MAP_FAILED;
		size_t len = 0;
		for (size_t pages = 256; pages >= 8 && m == MAP_FAILED; pages /= 2) {
			len = (pages + 1) * (size_t)pg;
			m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, (int)fd, 0);
		}
		if (m == MAP_FAILED) {
			err = errno;
			close((int)fd);
			break;
		}
		g_rings[g_nrings++] = (struct rring){ (int)fd, m, len };
	}
	if (err || g_nrings == 0) {
		char eb[24];
		et_log(0, "ENORMOUSTEXT_RECORD=%s: perf_event_open cannot sample this process (%s): nothing recorded",
		       tmpl, et_errno_text(err ? err : ENODEV, eb));
		for (int i = 0; i < g_nrings; i++) {
			munmap(g_rings[i].meta, g_rings[i].len);
			close(g_rings[i].fd);
		}
		g_nrings = 0;
		return;
	}
	g_pid = getpid();
	g_on = true;
	/* a forked child shares the buffers' mappings but not the samples */
	pthread_atfork(NULL, NULL, et_record_forget);
}

/* In-place heapsort: no allocation, whatever malloc the program uses. */
static void sift(uint64_t *a, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, m = i;
		if (l < n && a[l] > a[m])
			m = l;
		if (l + 1 < n && a[l + 1] > a[m])
			m = l + 1;
		if (m == i)
			return;
		uint64_t t = a[i];
		a[i] = a[m];
		a[m] = t;
		i = m;
	}
}

static void sort_u64(uint64_t *a, size_t n)
{
	for (size_t i = n / 2; i-- > 0;)
		sift(a, n, i);
	for (size_t e = n; e-- > 1;) {
		uint64_t t = a[0];
		a[0] = a[e];
		a[e] = t;
		sift(a, e, 0);
	}
}

struct wbuf {
	int fd, err;
	size_t n;
	char b[4096];
};

static void wflush(struct wbuf *w)
{
	size_t off = 0;
	while (off < w->n && !w->err) {
		ssize_t r = write(w->fd, w->b + off, w->n - off);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			w->err = r < 0 ? errno : EIO;
		else
			off += (size_t)r;
	}
	w->n = 0;
}

static void wprintf(struct wbuf *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void wprintf(struct wbuf *w, const char *fmt, ...)
{
	char line[4200];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof line)
		n = (int)sizeof line - 1;
	if (w->n + (size_t)n > sizeof w->b)
		wflush(w);
	memcpy(w->b + w->n, line, (size_t)n);
	w->n += (size_t)n;
}

__attribute__((destructor)) static void et_record_finish(void)
{
	if (!g_on || getpid() != g_pid)
		return;
	g_on = false;
	for (int i = 0; i < g_nrings; i++)
		ioctl(g_rings[i].fd, PERF_EVENT_IOC_DISABLE, 0);
	/* the samples of this process */
	size_t cap = 0;
	for (int i = 0; i < g_nrings; i++)
		cap += (g_rings[i].meta->data_head - g_rings[i].meta->data_tail) / 24 + 1;
	size_t ips_len = cap * sizeof(uint64_t);
	uint64_t *ips = et_scratch_alloc(ips_len);
	size_t n = 0;
	uint64_t lost = 0, others = 0;
	for (int i = 0; i < g_nrings && ips; i++) {
		struct perf_event_mmap_page *meta = g_rings[i].meta;
		const char *data = (const char *)meta + meta->data_offset;
		uint64_t size = meta->data_size, head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
		for (uint64_t t = meta->data_tail; t < head;) {
			struct perf_event_header h;
			char rec[64];
			for (size_t k = 0; k < sizeof h; k++)
				((char *)&h)[k] = data[(t + k) & (size - 1)];
			if (h.size < sizeof h)
				break;
			if (h.type == PERF_RECORD_SAMPLE && h.size >= sizeof h + 16 && h.size <= sizeof rec) {
				for (size_t k = 0; k < h.size; k++)
					rec[k] = data[(t + k) & (size - 1)];
				uint64_t ip;
				uint32_t pid;
				memcpy(&ip, rec + sizeof h, 8);
				memcpy(&pid, rec + sizeof h + 8, 4);
				if ((pid_t)pid == g_pid && n < cap)
					ips[n++] = ip;
				else
					others++;
			} else if (h.type == PERF_RECORD_LOST && h.size >= sizeof h + 16) {
				uint64_t l;
				for (size_t k = 0; k < 8; k++)
					((char *)&l)[k] = data[(t + sizeof h + 8 + k) & (size - 1)];
				lost += l;
			}
			t += h.size;
		}
	}
	for (int i = 0; i < g_nrings; i++) {
		munmap(g_rings[i].meta, g_rings[i].len);
		close(g_rings[i].fd);
	}
	g_nrings = 0;
	if (!ips)
		return;
	sort_u64(ips, n);

	/* the objects loaded now */
	size_t no = et_objects_collect(NULL, 0, NULL, NULL) + 8;
	size_t objs_len = no * sizeof(struct et_object);
	struct et_object *objs = et_scratch_alloc(objs_len);
	if (!objs) {
		et_scratch_free(ips, ips_len);
		return;
	}
	no = et_objects_collect(objs, no, NULL, NULL);

	char tmp[1100];
	snprintf(tmp, sizeof tmp, "%s.%ld.tmp", g_path, (long)g_pid);
	struct wbuf w = { .fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644) };
	if (w.fd < 0) {
		char eb[24];
		et_log(0, "ENORMOUSTEXT_RECORD: cannot write %s: %s", g_path, et_errno_text(errno, eb));
		et_scratch_free(objs, objs_len);
		et_scratch_free(ips, ips_len);
		return;
	}
	wprintf(&w, "enormoustext-profile 1\ngranule %u\n", REC_GRANULE);
	wprintf(&w, "# recorded by ENORMOUSTEXT_RECORD in process %ld: %zu samples, %llu lost\n", (long)g_pid, n,
	        (unsigned long long)lost);
	(void)others;
	for (size_t i = 0; i < no; i++) {
		struct et_object *o = &objs[i];
		if (!o->build_id[0] || !o->nsegs)
			continue;
		char exe[4096];
		const char *path = o->path;
		if (o->is_main && !path[0]) {
			ssize_t l = readlink("/proc/self/exe", exe, sizeof exe - 1);
			exe[l > 0 ? l : 0] = '\0';
			path = exe;
		}
		bool head = false;
		for (uint32_t s = 0; s < o->nsegs; s++) {
			/* the sorted samples of [start, end): first by binary search */
			size_t a = 0, b = n;
			while (a < b) {
				size_t m = a + (b - a) / 2;
				if (ips[m] < o->segs[s].start)
					a = m + 1;
				else
					b = m;
			}
			for (size_t k = a; k < n && ips[k] < o->segs[s].end;) {
				uint64_t g = (ips[k] - o->base) / REC_GRANULE;
				uint64_t cnt = 0;
				while (k < n && ips[k] < o->segs[s].end && (ips[k] - o->base) / REC_GRANULE == g) {
					cnt++;
					k++;
				}
				if (!head) {
					wprintf(&w, "object %s %s\n", o->build_id, path);
					head = true;
				}
				wprintf(&w, "%llx %llu\n", (unsigned long long)(g * REC_GRANULE), (unsigned long long)cnt);
			}
		}
	}
	wflush(&w);
	int err = w.err;
	if (close(w.fd) != 0 && !err)
		err = errno;
	if (!err && rename(tmp, g_path) != 0)
		err = errno;
	if (err) {
		char eb[24];
		unlink(tmp);
		et_log(0, "ENORMOUSTEXT_RECORD: cannot write %s: %s", g_path, et_errno_text(err, eb));
	}
	et_scratch_free(objs, objs_len);
	et_scratch_free(ips, ips_len);
}
#endif /* ET_HAVE_PERF */
