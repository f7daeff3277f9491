/*
 * runtime/record.c — ENORMOUSTEXT_RECORD=FILE: a profile of this very
 * process, for programs started some other way than `enormoustext record`
 * (a service, a program run by another program).
 *
 * Owns: the process's sampling (its perf events or its threads' timers,
 * the samples' buffers, the SIGPROF handler) and the attribution of the
 * samples to the objects loaded at exit.
 * May call: core (profile: the format is written by its one writer;
 * outfile: how the file is written; log, util), os (perf events, timers,
 * mappings), runtime/objects (the objects loaded at exit),
 * runtime/sandbox (it stops when a seccomp filter goes in).
 * Never: allocates with malloc on the sampling path or in the signal
 * handler; writes a profile line itself; lets its signal reach a program
 * that has a SIGPROF disposition of its own.
 *
 * At start-up: one perf_event_open software cpu-clock event per CPU on
 * this process, inherited by the threads it starts, removed at exec (Linux
 * 5.13+), user-space samples only, each with its own ring buffer.  No
 * thread, no signal: the samples wait in the buffers (a full buffer drops
 * the newest, and the profile says how many were lost).
 *
 * Where perf_event_open is refused (a container's seccomp filter,
 * kernel.perf_event_paranoid, a kernel without it, a build without its
 * header): each thread gets a POSIX timer on its own CPU time (timer_create,
 * CLOCK_THREAD_CPUTIME_ID, SIGEV_THREAD_ID) that sends it SIGPROF, and the
 * handler stores the interrupted program counter in a preallocated buffer.
 * The main thread's timer starts here; pthread_create (interpose/, the
 * shared library only) gives each new thread its own; a thread's timer
 * goes when it exits.  A sleeping thread, or one that blocks SIGPROF, is
 * never interrupted.  Not used when the program has a SIGPROF disposition
 * at start-up; stopped when it sets one later (its handler would take our
 * signals, its SIG_DFL would die of them).
 *
 * At exit (the library's destructor): the samples of this process are
 * attributed to the objects loaded then, by address — text the library
 * moved is found just as well — and written as a profile (core/profile.c's
 * writer) through core/outfile.c (a file: beside, renamed into place; a
 * device or FIFO as it is; %p is the process id).  When neither way can
 * sample, nothing is recorded, and one line says so.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "runtime/record.h"

#include "core/log.h"
#include "core/profile.h"
#include "core/outfile.h"
#include "core/util.h"
#include "runtime/objects.h"
#include "runtime/sandbox.h"
#include "os/os.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
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

#include "os/perf_attr.h"
#endif

#define REC_GRANULE ET_PROFILE_RECORD_GRANULE
#define REC_MAX_CPUS 256
#define REC_HZ ET_PROFILE_RECORD_HZ

static char g_path[1024] ET_LARGE_BSS;
static pid_t g_pid;
static bool g_on;
static const char *g_method = "";

static bool g_timer_on;

static void timer_slots_clear(void);

/* The atfork child handler.  It takes no lock: in the child of a threaded
 * program only the forking thread runs, and a lock another thread held at
 * the fork stays held for ever. */
void et_record_forget(void)
{
	g_on = false;     /* the buffers are the parent's (inherited mappings) */
	/* a forked child has no timers (not inherited): its threads get none */
	__atomic_store_n(&g_timer_on, false, __ATOMIC_RELEASE);
	timer_slots_clear();
}

/* ---- sampling with perf_event_open ------------------------------------ */

#ifdef ET_HAVE_PERF
/*
 * No descriptor is kept.  Each event's descriptor is closed as soon as its
 * ring is mapped: the mapping holds the event (a mapping holds its file),
 * so the event samples on until the ring is unmapped, and nothing is ever
 * done later with a number the program may have been handed since — a
 * program that calls closefrom(3) and opens its output file gets that
 * very number (a daemon, sshd), and an ioctl or close of "ours" would act
 * on its file.  The samples are read without stopping the event: up to
 * the head read once, while the kernel writes only past it (the ring is
 * mapped writable, so it never overwrites what is not read).
 */
struct rring {
	struct perf_event_mmap_page *meta;
	size_t len;
};

static struct rring g_rings[REC_MAX_CPUS] ET_LARGE_BSS;
static int g_nrings;

/* Unmapping a ring ends its event (the last reference to its file). */
static void perf_close(void)
{
	for (int i = 0; i < g_nrings; i++)
		et_os_unmap(g_rings[i].meta, g_rings[i].len);
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
		long fd = et_os_perf_open(&a, (int)cpu);
		if (fd < 0 && errno == EINVAL) {
			a.remove_on_exec = 0;     /* before Linux 5.13 */
			fd = et_os_perf_open(&a, (int)cpu);
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
			m = et_os_map_shared(len, (int)fd);
		}
		err = m == MAP_FAILED ? errno : 0;
		close((int)fd);   /* the mapping keeps the event: see struct rring */
		if (err)
			break;
		g_rings[g_nrings++] = (struct rring){ m, len };
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
	/* each ring's head, read once: what lies before it is complete */
	uint64_t heads[REC_MAX_CPUS];
	size_t cap = 0;
	for (int i = 0; i < g_nrings; i++) {
		heads[i] = __atomic_load_n(&g_rings[i].meta->data_head, __ATOMIC_ACQUIRE);
		cap += (heads[i] - g_rings[i].meta->data_tail) / 24 + 1;
	}
	uint64_t *ips = et_scratch_alloc(cap * sizeof(uint64_t));
	size_t n = 0;
	uint64_t lost = 0;
	for (int i = 0; i < g_nrings && ips; i++) {
		struct perf_event_mmap_page *meta = g_rings[i].meta;
		const char *data = (const char *)meta + meta->data_offset;
		uint64_t size = meta->data_size, head = heads[i];
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
#define TIMER_SLOTS 4096        /* threads sampled at once */

static uint64_t *g_tbuf;
static uint64_t g_tcount;       /* samples offered; those past TIMER_CAP are lost */
static int g_tslots[TIMER_SLOTS] ET_LARGE_BSS;   /* kernel timer id + 1 of each sampled thread; 0 free */
static int g_inflight;          /* handlers running now */
static char g_timer_tag;        /* its sigev_value, to tell its signals from a kill() */
static bool g_handler_ours;     /* SIGPROF's disposition is on_sigprof, not one the program set */
static pthread_key_t g_tkey;

#ifdef ET_HAVE_PC
static void on_sigprof(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	__atomic_add_fetch(&g_inflight, 1, __ATOMIC_ACQ_REL);
	if (__atomic_load_n(&g_timer_on, __ATOMIC_ACQUIRE) && si->si_code == SI_TIMER &&
	    si->si_value.sival_ptr == &g_timer_tag) {
		uint64_t i = __atomic_fetch_add(&g_tcount, 1, __ATOMIC_RELAXED);
		if (i < TIMER_CAP)
			g_tbuf[i] = context_pc(uc);
	}
	__atomic_sub_fetch(&g_inflight, 1, __ATOMIC_ACQ_REL);
}
#endif

/* A timer on the calling thread's CPU time, signalling that thread: the
 * signal goes where the time went, whatever the kernel's version, and a
 * thread that blocks SIGPROF or sleeps is never interrupted.  0 or errno. */
static int thread_timer_arm(void)
{
	int id = -1;
	if (et_os_thread_timer_create(SIGPROF, &g_timer_tag, &id) != 0)
		return errno;
	size_t k = 0;
	for (; k < TIMER_SLOTS; k++) {
		int free_slot = 0;
		if (__atomic_compare_exchange_n(&g_tslots[k], &free_slot, id + 1, false, __ATOMIC_ACQ_REL,
		                                __ATOMIC_RELAXED))
			break;
	}
	if (k == TIMER_SLOTS) {
		et_os_timer_delete(id);
		return ENOSPC;
	}
	long ns = 1000000000L / REC_HZ;
	if (et_os_timer_every(id, ns) != 0) {
		int e = errno;
		if (__atomic_exchange_n(&g_tslots[k], 0, __ATOMIC_ACQ_REL) == id + 1)
			et_os_timer_delete(id);
		return e;
	}
	/* deleted when the thread exits (the key's destructor) */
	pthread_setspecific(g_tkey, (void *)(uintptr_t)(k + 1));
	return 0;
}

static void thread_timer_done(void *v)
{
	size_t k = (uintptr_t)v - 1;
	int id1 = k < TIMER_SLOTS ? __atomic_exchange_n(&g_tslots[k], 0, __ATOMIC_ACQ_REL) : 0;
	if (id1)
		et_os_timer_delete(id1 - 1);
}

/* In a forked child: the slots hold the parent's timer ids, which mean
 * nothing here — or, worse, name timers the child creates itself (ids are
 * per process and start again at 0): the forking thread's slot would be
 * deleted by thread_timer_done when that thread ends, taking the child's
 * own timer with it.  The child starts with every slot free. */
static void timer_slots_clear(void)
{
	for (size_t k = 0; k < TIMER_SLOTS; k++)
		__atomic_store_n(&g_tslots[k], 0, __ATOMIC_RELAXED);
	__atomic_store_n(&g_inflight, 0, __ATOMIC_RELAXED);
}

/* Every thread's timer goes; the handler stays (it ignores what comes). */
static void timers_stop(void)
{
	__atomic_store_n(&g_timer_on, false, __ATOMIC_RELEASE);
	for (size_t k = 0; k < TIMER_SLOTS; k++) {
		int id1 = __atomic_exchange_n(&g_tslots[k], 0, __ATOMIC_ACQ_REL);
		if (id1)
			et_os_timer_delete(id1 - 1);
	}
}

/* 0, or an errno; *why names what refused */
static int timer_start(const char **why)
{
#ifndef ET_HAVE_PC
	*why = "no way to read a signal's program counter on this architecture";
	return ENOSYS;
#else
	struct sigaction old;
	if (et_os_sigaction(SIGPROF, NULL, &old) != 0) {
		*why = "sigaction";
		return errno;
	}
	/* sa_handler and sa_sigaction share their storage (glibc, musl) */
	if (old.sa_handler != SIG_DFL) {
		*why = "the program has its own SIGPROF disposition";
		return EBUSY;
	}
	if (pthread_key_create(&g_tkey, thread_timer_done) != 0) {
		*why = "pthread_key_create";
		return EAGAIN;
	}
	void *buf = et_os_map_anon(TIMER_CAP * sizeof(uint64_t), true);
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
	if (et_os_sigaction(SIGPROF, &sa, NULL) != 0) {
		*why = "sigaction";
		int e = errno;
		et_os_unmap(buf, TIMER_CAP * sizeof(uint64_t));
		g_tbuf = NULL;
		return e;
	}
	__atomic_store_n(&g_handler_ours, true, __ATOMIC_RELEASE);
	__atomic_store_n(&g_timer_on, true, __ATOMIC_RELEASE);
	int e = thread_timer_arm();
	if (e != 0) {
		*why = "timer_create";
		timers_stop();
		/* the handler stays: it ignores whatever signal might still come */
		et_os_unmap(buf, TIMER_CAP * sizeof(uint64_t));
		g_tbuf = NULL;
		return e;
	}
	return 0;
#endif
}

bool et_record_threads_sampled(void)
{
	return __atomic_load_n(&g_timer_on, __ATOMIC_ACQUIRE);
}

/* pthread_create (interpose/signals.c) starts threads through here while
 * the timer samples: each thread gets a timer of its own before it runs
 * its code. */
void et_record_thread_begins(void)
{
	if (__atomic_load_n(&g_timer_on, __ATOMIC_ACQUIRE))
		thread_timer_arm();
}

/* The program sets a SIGPROF disposition of its own (interpose/signals.c):
 * its handler would take our signals, or its SIG_DFL be killed by them.
 * The timers stop first; the samples so far are written at exit. */
bool et_record_sigprof_hidden(void)
{
	return __atomic_load_n(&g_handler_ours, __ATOMIC_ACQUIRE);
}

void et_record_sigprof_change(const void *handler)
{
#ifdef ET_HAVE_PC
	if (handler == (const void *)on_sigprof)
		return;
	/* from now on the disposition is the program's */
	__atomic_store_n(&g_handler_ours, false, __ATOMIC_RELEASE);
	if (!__atomic_load_n(&g_timer_on, __ATOMIC_ACQUIRE))
		return;
	timers_stop();
	et_log(1, "ENORMOUSTEXT_RECORD: the program sets its own SIGPROF disposition: sampling stops here");
#else
	(void)handler;
#endif
}

/* The samples, in the timer's own buffer (no copy). */
static uint64_t *timer_collect(size_t *n_out, uint64_t *lost_out)
{
	timers_stop();
	/* a handler that counted its sample before the stop may still be
	 * storing it: wait for it (a few instructions) */
	for (int i = 0; i < 100000 && __atomic_load_n(&g_inflight, __ATOMIC_ACQUIRE) > 0; i++)
		sched_yield();
	uint64_t c = __atomic_load_n(&g_tcount, __ATOMIC_ACQUIRE);
	*n_out = c < TIMER_CAP ? (size_t)c : TIMER_CAP;
	*lost_out = c - *n_out;
	return g_tbuf;
}

/* ---- start -------------------------------------------------------------- */

/* ENORMOUSTEXT_HOT=auto: the samples are for et_record_take_profile, not
 * for a file at exit. */
static bool g_in_memory;

/* runtime/sandbox.c: a seccomp filter goes in.  The timers stop now (their
 * deletion at each thread's end is a call the filter may kill for), and
 * nothing is written at exit (opening and renaming the profile are too). */
static void sandbox_entering(const char *what)
{
	if (!g_on)
		return;
	timers_stop();
	et_log(1, "%s: %s: sampling stops; no profile is written", g_in_memory ? "ENORMOUSTEXT_HOT=auto" :
	       "ENORMOUSTEXT_RECORD", what);
}

void et_record_start(const char *tmpl)
{
	if (g_on)
		return;
	g_in_memory = tmpl == NULL;
	if (g_in_memory)
		tmpl = "(in memory)";
	else if (et_expand_path(tmpl, g_path, sizeof g_path) != 0)
		return;
	/* its buffers are address space the program may need (util.c) */
	if (!et_as_headroom_ok()) {
		et_log(1, "ENORMOUSTEXT_RECORD=%s: RLIMIT_AS leaves too little address space: not recording", tmpl);
		return;
	}
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
			et_log(0, "%s=%s: cannot sample this process: %s: %s; %s%s%s: nothing recorded",
			       g_in_memory ? "ENORMOUSTEXT_HOT" : "ENORMOUSTEXT_RECORD",
			       g_in_memory ? "auto" : tmpl, pwhy, et_errno_text(perr, eb), twhy, terr == EBUSY ? "" : ": ",
			       terr == EBUSY ? "" : et_errno_text(terr, eb2));
			return;
		}
		g_method = "CPU-time timer and SIGPROF";
		et_log(1, "%s=%s: %s: %s: sampling with a CPU-time timer and SIGPROF instead",
		       g_in_memory ? "ENORMOUSTEXT_HOT" : "ENORMOUSTEXT_RECORD", g_in_memory ? "auto" : tmpl, pwhy,
		       et_errno_text(perr, eb));
	}
	g_pid = getpid();
	g_on = true;
	et_sandbox_on_entering(sandbox_entering);
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

/* The index of the first of the n sorted samples at or above x. */
static size_t lower_bound(const uint64_t *a, size_t n, uint64_t x)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t m = lo + (hi - lo) / 2;
		if (a[m] < x)
			lo = m + 1;
		else
			hi = m;
	}
	return lo;
}

/* The scratch array of samples goes back unless it is the timer's buffer,
 * which stays mapped: a late handler may still touch it. */
static void release(uint64_t *ips, size_t ips_len)
{
	if (ips && ips != g_tbuf)
		et_scratch_free(ips, ips_len);
}

/* One line naming the file and why; a FIFO with no reader is no failure
 * (nobody wants the profile now): said at ENORMOUSTEXT_VERBOSE=1 only. */
static void write_failed(const struct et_out *out, int e)
{
	char eb[24], why[160];
	if (out->skipped)
		et_log(1, "ENORMOUSTEXT_RECORD: %s: %s: the profile is not written", g_path, out->type);
	else
		et_log(0, "ENORMOUSTEXT_RECORD: cannot write %s: %s", g_path,
		       et_out_why(out, why, sizeof why) ? why : et_out_errno_text(-e, eb));
}

/* The samples so far, sorted; sampling stops.  NULL when there are none
 * to have (no memory). */
static uint64_t *collect(size_t *n, size_t *ips_len, uint64_t *lost)
{
	uint64_t *ips = NULL;
	*n = *ips_len = 0;
	*lost = 0;
	if (g_tbuf) {
		ips = timer_collect(n, lost);
	} else {
#ifdef ET_HAVE_PERF
		size_t cap = 0;
		ips = perf_collect(n, &cap, lost);
		*ips_len = cap * sizeof(uint64_t);
#endif
	}
	if (ips)
		sort_u64(ips, *n);
	return ips;
}

/* The n sorted samples as a profile, attributed to the objects loaded now,
 * into the writer w (begun). */
static void write_objects(struct et_prof_writer *w, const uint64_t *ips, size_t n)
{
	size_t no = et_objects_collect(NULL, 0, NULL, NULL) + 8;
	size_t objs_len = no * sizeof(struct et_object);
	struct et_object *objs = et_scratch_alloc(objs_len);
	if (!objs)
		return;
	no = et_objects_collect(objs, no, NULL, NULL);
	for (size_t i = 0; i < no; i++) {
		struct et_object *o = &objs[i];
		if (!o->build_id[0] || !o->nsegs)
			continue;
		char exe[4096];
		const char *path = o->path;
		if (o->is_main && !path[0]) {
			et_os_exe_path(exe, sizeof exe);
			path = exe;
		}
		/* the same file loaded twice (two paths, one build-id) is one
		 * object of the profile: the first copy names it, and the samples
		 * of every copy count, in its own address space */
		bool seen = false;
		for (size_t j = 0; j < i && !seen; j++)
			seen = objs[j].nsegs && !strcmp(objs[j].build_id, o->build_id);
		if (seen)
			continue;
		/* loaded and never run in: named with no counts (cold, not unknown) */
		if (et_profile_write_object(w, o->build_id, path) != 0)
			continue;
		size_t cnt = 0;
		for (size_t j = i; j < no; j++)
			if (objs[j].nsegs && !strcmp(objs[j].build_id, o->build_id))
				for (uint32_t s = 0; s < objs[j].nsegs; s++)
					cnt += lower_bound(ips, n, objs[j].segs[s].end) -
					       lower_bound(ips, n, objs[j].segs[s].start);
		uint64_t *offs = cnt ? et_scratch_alloc(cnt * sizeof(uint64_t)) : NULL;
		if (!offs)
			continue;
		size_t m = 0;
		for (size_t j = i; j < no; j++)
			if (objs[j].nsegs && !strcmp(objs[j].build_id, o->build_id))
				for (uint32_t s = 0; s < objs[j].nsegs; s++)
					for (size_t k = lower_bound(ips, n, objs[j].segs[s].start);
					     k < n && ips[k] < objs[j].segs[s].end && m < cnt; k++)
						offs[m++] = (ips[k] - objs[j].base) / REC_GRANULE * REC_GRANULE;
		sort_u64(offs, m);
		for (size_t k = 0; k < m;) {
			size_t e = k;
			while (e < m && offs[e] == offs[k])
				e++;
			(void)et_profile_write_count(w, offs[k], e - k);
			k = e;
		}
		et_scratch_free(offs, cnt * sizeof(uint64_t));
	}
	et_scratch_free(objs, objs_len);
}

__attribute__((destructor)) static void et_record_finish(void)
{
	if (!g_on || getpid() != g_pid || g_in_memory || et_sandbox_known())
		return;
	g_on = false;
	size_t n, ips_len;
	uint64_t lost;
	uint64_t *ips = collect(&n, &ips_len, &lost);
	if (!ips)
		return;
	struct et_out out;
	int oe = et_out_open(&out, g_path, 0);
	if (oe) {
		write_failed(&out, oe);
		release(ips, ips_len);
		return;
	}
	char buf[4096], comment[160];
	struct et_sink sink;
	et_out_sink(&sink, &out, buf, sizeof buf);
	snprintf(comment, sizeof comment, "recorded by ENORMOUSTEXT_RECORD (%s) in process %ld: %zu samples, %llu lost",
	         g_method, (long)g_pid, n, (unsigned long long)lost);
	struct et_prof_writer w;
	et_profile_write_begin(&w, &sink, REC_GRANULE, comment);
	write_objects(&w, ips, n);
	et_profile_write_end(&w);
	oe = et_out_commit(&out);
	if (oe)
		write_failed(&out, oe);
	release(ips, ips_len);
}

/* ---- ENORMOUSTEXT_HOT=auto: the profile in memory ---------------------- */

/* A sink into a scratch buffer that grows (doubling). */
struct membuf {
	char *p;
	size_t len, cap;
	bool failed;
};

static void mem_write(void *ctx, const char *s, size_t n)
{
	struct membuf *m = ctx;
	if (m->failed)
		return;
	if (m->len + n > m->cap) {
		size_t cap = m->cap ? m->cap : 65536;
		while (cap < m->len + n)
			cap *= 2;
		char *q = et_scratch_alloc(cap);
		if (!q) {
			m->failed = true;
			return;
		}
		if (m->p) {
			memcpy(q, m->p, m->len);
			et_scratch_free(m->p, m->cap);
		}
		m->p = q;
		m->cap = cap;
	}
	memcpy(m->p + m->len, s, n);
	m->len += n;
}

static void mem_flush(void *ctx)
{
	(void)ctx;
}

int et_record_take_profile(struct et_profile *p, size_t *samples)
{
	*samples = 0;
	if (!g_on || !g_in_memory || getpid() != g_pid || et_sandbox_known())
		return -ENODATA;
	g_on = false;
	size_t n, ips_len;
	uint64_t lost;
	uint64_t *ips = collect(&n, &ips_len, &lost);
	if (!ips)
		return -ENOMEM;
	*samples = n;
	/* the one writer, the one parser: the profile is the format's */
	struct membuf m = { NULL, 0, 0, false };
	char buf[4096];
	struct et_sink sink = { mem_write, mem_flush, &m, buf, sizeof buf, 0 };
	struct et_prof_writer w;
	et_profile_write_begin(&w, &sink, REC_GRANULE, NULL);
	write_objects(&w, ips, n);
	et_profile_write_end(&w);
	release(ips, ips_len);
	int e = m.failed ? -ENOMEM : et_profile_parse(p, m.p, m.len);
	if (m.p)
		et_scratch_free(m.p, m.cap);
	return e;
}
