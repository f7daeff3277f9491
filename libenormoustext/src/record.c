/*
 * record.c — ENORMOUSTEXT_RECORD=FILE: a profile of this very process, for
 * programs started some other way than `enormoustext record` (a service,
 * a program run by another program).
 *
 * At start-up: one perf_event_open software cpu-clock event per CPU on
 * this process, inherited by the threads it starts, removed at exec (Linux
 * 5.13+), user-space samples only, each with its own ring buffer.  No
 * thread, no signal: the samples wait in the buffers (a full buffer drops
 * the newest, and the profile says how many were lost).
 *
 * Where perf_event_open is refused (a container's seccomp filter,
 * kernel.perf_event_paranoid, a kernel without it, a build without its
 * header): a POSIX timer on the process's CPU time (timer_create,
 * CLOCK_PROCESS_CPUTIME_ID) sends SIGPROF, and the handler stores the
 * interrupted program counter in a preallocated buffer.  Since Linux 6.3 the
 * kernel delivers such a signal to the thread that used the CPU, so every
 * thread is sampled where it runs; older kernels prefer the main thread.
 * Not used when the program has its own SIGPROF handler.
 *
 * At exit (the library's destructor): the samples of this process are
 * attributed to the objects loaded then, by address — text the library
 * moved is found just as well — and written as a profile (FILE beside,
 * renamed into place; %p is the process id).  When neither way can sample,
 * nothing is recorded, and one line says so.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

/* musl-gcc's default include path has no kernel headers: such a build
 * samples with the timer only. */
#if defined(__has_include)
#if __has_include(<linux/perf_event.h>)
#define ET_HAVE_PERF 1
#endif
#endif

#ifdef ET_HAVE_PERF
#include <linux/perf_event.h>
#include <sys/ioctl.h>

#include "perf_attr.h"
#endif

#define REC_GRANULE 64u
#define REC_MAX_CPUS 256
#define REC_HZ 999

static char g_path[1024];
static pid_t g_pid;
static bool g_on;
static const char *g_method = "";

void et_record_forget(void)
{
	g_on = false;     /* the buffers are the parent's (inherited mappings) */
}

/* ---- sampling with perf_event_open ------------------------------------ */

#ifdef ET_HAVE_PERF
struct rring {
	int fd;
	struct perf_event_mmap_page *meta;
	size_t len;
};

static struct rring g_rings[REC_MAX_CPUS];
static int g_nrings;

static void perf_close(void)
{
	for (int i = 0; i < g_nrings; i++) {
		munmap(g_rings[i].meta, g_rings[i].len);
		close(g_rings[i].fd);
	}
	g_nrings = 0;
}

/* 0, or the errno that refused the events */
static int perf_start(void)
{
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
		et_cpu_clock_attr(&a, REC_HZ);
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
		perf_close();
		return err ? err : ENODEV;
	}
	return 0;
}

/* The samples of this process, into a new scratch array (*cap entries). */
static uint64_t *perf_collect(size_t *n_out, size_t *cap_out, uint64_t *lost_out)
{
	for (int i = 0; i < g_nrings; i++)
		ioctl(g_rings[i].fd, PERF_EVENT_IOC_DISABLE, 0);
	size_t cap = 0;
	for (int i = 0; i < g_nrings; i++)
		cap += (g_rings[i].meta->data_head - g_rings[i].meta->data_tail) / 24 + 1;
	uint64_t *ips = et_scratch_alloc(cap * sizeof(uint64_t));
	size_t n = 0;
	uint64_t lost = 0;
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
			} else if (h.type == PERF_RECORD_LOST && h.size >= sizeof h + 16) {
				uint64_t l;
				for (size_t k = 0; k < 8; k++)
					((char *)&l)[k] = data[(t + sizeof h + 8 + k) & (size - 1)];
				lost += l;
			}
			t += h.size;
		}
	}
	perf_close();
	*n_out = n;
	*cap_out = cap;
	*lost_out = lost;
	return ips;
}
#endif /* ET_HAVE_PERF */

/* ---- sampling with a CPU-time timer and SIGPROF ------------------------ */

#if defined(__x86_64__) || defined(__i386__) || defined(__aarch64__)
#define ET_HAVE_PC 1
static uint64_t context_pc(const void *ucv)
{
	const ucontext_t *uc = ucv;
#if defined(__x86_64__)
	return (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
#elif defined(__i386__)
	return (uint32_t)uc->uc_mcontext.gregs[REG_EIP];
#else
	return uc->uc_mcontext.pc;
#endif
}
#endif

#define TIMER_CAP (1u << 20)    /* samples: 8 MiB, touched only as filled */

static uint64_t *g_tbuf;
static uint64_t g_tcount;       /* samples offered; those past TIMER_CAP are lost */
static int g_timer = -1;        /* the kernel's timer id */
static bool g_timer_on;
static char g_timer_tag;        /* its sigev_value, to tell its signals from a kill() */

#ifdef ET_HAVE_PC
static void on_sigprof(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	if (!__atomic_load_n(&g_timer_on, __ATOMIC_RELAXED) || si->si_code != SI_TIMER ||
	    si->si_value.sival_ptr != &g_timer_tag)
		return;
	uint64_t i = __atomic_fetch_add(&g_tcount, 1, __ATOMIC_RELAXED);
	if (i < TIMER_CAP)
		g_tbuf[i] = context_pc(uc);
}
#endif

/* 0, or an errno; *why names what refused */
static int timer_start(const char **why)
{
#ifndef ET_HAVE_PC
	*why = "no way to read a signal's program counter on this architecture";
	return ENOSYS;
#else
	struct sigaction old;
	if (sigaction(SIGPROF, NULL, &old) != 0) {
		*why = "sigaction";
		return errno;
	}
	/* sa_handler and sa_sigaction share their storage (glibc, musl) */
	if (old.sa_handler != SIG_DFL) {
		*why = "the program has its own SIGPROF disposition";
		return EBUSY;
	}
	void *buf = mmap(NULL, TIMER_CAP * sizeof(uint64_t), PROT_READ | PROT_WRITE,
	                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (buf == MAP_FAILED) {
		*why = "mmap of the sample buffer";
		return errno;
	}
	g_tbuf = buf;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_sigprof;
	sa.sa_flags = SA_SIGINFO | SA_RESTART | SA_ONSTACK;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGPROF, &sa, NULL) != 0) {
		*why = "sigaction";
		int e = errno;
		munmap(buf, TIMER_CAP * sizeof(uint64_t));
		return e;
	}
	/* the system calls themselves: librt is not needed, glibc or musl */
	struct sigevent sev;
	memset(&sev, 0, sizeof sev);
	sev.sigev_notify = SIGEV_SIGNAL;
	sev.sigev_signo = SIGPROF;
	sev.sigev_value.sival_ptr = &g_timer_tag;
	int id = -1;
	if (syscall(SYS_timer_create, CLOCK_PROCESS_CPUTIME_ID, &sev, &id) != 0) {
		*why = "timer_create";
		goto undo;
	}
	g_timer = id;
	__atomic_store_n(&g_timer_on, true, __ATOMIC_RELEASE);
	long ns = 1000000000L / REC_HZ;
	struct itimerspec its = { { 0, ns }, { 0, ns } };
	if (syscall(SYS_timer_settime, id, 0, &its, NULL) != 0) {
		*why = "timer_settime";
		goto undo;
	}
	return 0;
undo:;
	int e = errno;
	__atomic_store_n(&g_timer_on, false, __ATOMIC_RELEASE);
	if (g_timer >= 0)
		syscall(SYS_timer_delete, g_timer);
	g_timer = -1;
	/* the handler stays: it ignores whatever signal might still come */
	munmap(buf, TIMER_CAP * sizeof(uint64_t));
	g_tbuf = NULL;
	return e;
#endif
}

/* The samples, in the timer's own buffer (no copy). */
static uint64_t *timer_collect(size_t *n_out, uint64_t *lost_out)
{
	syscall(SYS_timer_delete, g_timer);
	g_timer = -1;
	__atomic_store_n(&g_timer_on, false, __ATOMIC_RELEASE);
	/* a handler that started before the store may still be writing its
	 * slot: it is one store, done before any of our reads could matter
	 * much — and the handler stays installed, so a late signal is ignored */
	uint64_t c = __atomic_load_n(&g_tcount, __ATOMIC_ACQUIRE);
	*n_out = c < TIMER_CAP ? (size_t)c : TIMER_CAP;
	*lost_out = c - *n_out;
	return g_tbuf;
}

/* ---- start -------------------------------------------------------------- */

void et_record_start(const char *tmpl)
{
	if (g_on || et_expand_path(tmpl, g_path, sizeof g_path) != 0)
		return;
	int perr = ENOSYS;
	const char *pwhy = "this build of the library has no <linux/perf_event.h>";
#ifdef ET_HAVE_PERF
	perr = perf_start();
	pwhy = "perf_event_open";
	if (perr == 0)
		g_method = "perf_event_open cpu-clock";
#endif
	if (perr != 0) {
		const char *twhy = "";
		int terr = timer_start(&twhy);
		char eb[24], eb2[24];
		if (terr != 0) {
			et_log(0, "ENORMOUSTEXT_RECORD=%s: cannot sample this process: %s: %s; %s%s%s: nothing recorded",
			       tmpl, pwhy, et_errno_text(perr, eb), twhy, terr == EBUSY ? "" : ": ",
			       terr == EBUSY ? "" : et_errno_text(terr, eb2));
			return;
		}
		g_method = "CPU-time timer and SIGPROF";
		et_log(1, "ENORMOUSTEXT_RECORD=%s: %s: %s: sampling with a CPU-time timer and SIGPROF instead",
		       tmpl, pwhy, et_errno_text(perr, eb));
	}
	g_pid = getpid();
	g_on = true;
	/* a forked child shares the buffers' mappings but not the samples (and
	 * has no timer: POSIX timers are not inherited) */
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

/* The scratch array of samples goes back unless it is the timer's buffer,
 * which stays mapped: a late handler may still touch it. */
static void release(uint64_t *ips, size_t ips_len)
{
	if (ips && ips != g_tbuf)
		et_scratch_free(ips, ips_len);
}

__attribute__((destructor)) static void et_record_finish(void)
{
	if (!g_on || getpid() != g_pid)
		return;
	g_on = false;
	size_t n = 0, ips_len = 0;
	uint64_t lost = 0;
	uint64_t *ips = NULL;
	if (g_tbuf) {
		ips = timer_collect(&n, &lost);
	} else {
#ifdef ET_HAVE_PERF
		size_t cap = 0;
		ips = perf_collect(&n, &cap, &lost);
		ips_len = cap * sizeof(uint64_t);
#endif
	}
	if (!ips)
		return;
	sort_u64(ips, n);

	/* the objects loaded now */
	size_t no = et_objects_collect(NULL, 0, NULL, NULL) + 8;
	size_t objs_len = no * sizeof(struct et_object);
	struct et_object *objs = et_scratch_alloc(objs_len);
	if (!objs) {
		release(ips, ips_len);
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
		release(ips, ips_len);
		return;
	}
	wprintf(&w, "enormoustext-profile 1\ngranule %u\n", REC_GRANULE);
	wprintf(&w, "# recorded by ENORMOUSTEXT_RECORD (%s) in process %ld: %zu samples, %llu lost\n", g_method, (long)g_pid, n,
	        (unsigned long long)lost);
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
		/* loaded and never run in: known to the profile, so cold */
		if (!head)
			wprintf(&w, "object %s %s\n", o->build_id, path);
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
	release(ips, ips_len);
}
