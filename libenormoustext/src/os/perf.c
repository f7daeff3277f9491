/*
 * os/perf.c — perf-event and timer system calls, with the kernel's own
 * structure layouts for the raw calls (see os.h).
 *
 * Owns: perf_event_open, gettid, timer_create/settime/delete as raw system
 * calls (glibc and musl differ in how they spell the thread id of
 * SIGEV_THREAD_ID; musl on i386 has a 64-bit time_t, the system call the
 * old one), and libc's own sigaction.
 * May call: libc, os/next.c (libc's sigaction).
 * Never: logs, allocates, keeps state.
 */
#include "os/os.h"

#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#if defined(__has_include)
#if __has_include(<linux/perf_event.h>)
#include <linux/perf_event.h>
#define ET_OS_HAVE_PERF 1
#endif
#endif

long et_os_perf_open(struct perf_event_attr *a, int cpu)
{
#ifdef ET_OS_HAVE_PERF
	return et_os_sys6(SYS_perf_event_open, (long)a, 0, (long)cpu, (long)-1, (long)PERF_FLAG_FD_CLOEXEC, 0);
#else
	(void)a;
	(void)cpu;
	errno = ENOSYS;
	return -1;
#endif
}

struct k_sigevent {
	union sigval value;
	int signo, notify;
	union {
		int tid;
		int pad[(64 - 2 * sizeof(int) - sizeof(union sigval)) / sizeof(int)];
	} u;
};
struct k_itimerspec {
	long interval_s, interval_ns, value_s, value_ns;
};
#ifndef SIGEV_THREAD_ID
#define SIGEV_THREAD_ID 4
#endif

ET_STARTUP int et_os_thread_timer_create(int signo, void *tag, int *id)
{
	struct k_sigevent sev;
	memset(&sev, 0, sizeof sev);
	sev.value.sival_ptr = tag;
	sev.signo = signo;
	sev.notify = SIGEV_THREAD_ID;
	sev.u.tid = (int)et_os_sys6(SYS_gettid, 0, 0, 0, 0, 0, 0);
	*id = -1;
	return et_os_sys6(SYS_timer_create, (long)CLOCK_THREAD_CPUTIME_ID, (long)&sev, (long)id, 0, 0, 0) != 0 ? -1 : 0;
}

ET_STARTUP int et_os_timer_every(int id, long ns)
{
	struct k_itimerspec its = { 0, ns, 0, ns };
	return et_os_sys6(SYS_timer_settime, (long)id, 0, (long)&its, 0, 0, 0) != 0 ? -1 : 0;
}

ET_STARTUP void et_os_timer_delete(int id)
{
	et_os_sys6(SYS_timer_delete, (long)id, 0, 0, 0, 0, 0);
}

/* In the shared library, `sigaction` would bind to the first definition in
 * the process — this library's own wrapper when it is preloaded; the next
 * one after this object is libc's.  A static program (no dlsym) has no
 * wrapper: libc's is the only one, named here by glibc's other public name
 * for it, so that no code of the library names the wrapper's symbol
 * (tests/layout/modules.sh). */
typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);
#ifdef __GLIBC__
extern int __sigaction(int, const struct sigaction *, struct sigaction *);
#define ET_LIBC_SIGACTION __sigaction
#else
#define ET_LIBC_SIGACTION sigaction
#endif

ET_STARTUP int et_os_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	static void *real;
	sigaction_fn fn = (sigaction_fn)et_os_next(&real, "sigaction");
	if (!fn)
		fn = ET_LIBC_SIGACTION;
	return fn(sig, act, old);
}
