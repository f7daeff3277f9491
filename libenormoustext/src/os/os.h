/*
 * os/os.h — the only layer that makes memory-management, perf-event and
 * timer system calls, and the only one that knows the kernel's structure
 * layouts for them (os/perf.c, os/perf_attr.h).  Everything above it —
 * core (scratch memory) and runtime (remap, verify, objects, record) —
 * asks here, so that what the library does to the address space can be
 * read in one place.
 *
 * Each function keeps the system call's contract: a pointer or MAP_FAILED,
 * 0 or -1, with errno set by the kernel.  Nothing here allocates, logs or
 * keeps state (but the addresses et_os_next has found).
 */
#ifndef ET_OS_H
#define ET_OS_H

#include "os/base.h"

#include <signal.h>
#include <sys/mman.h>
#include <sys/types.h>

/* The flags the library uses that an older <sys/mman.h> may lack: their
 * one home is os/mm_flags.h, shared with the command; every module that
 * maps memory takes them from here. */
#include "os/mm_flags.h"

/* ---------------------------------------------------------- system calls */

/* A system call of the library's own: never through syscall(3), which the
 * shared library wraps (os/sys.c).  -1 with errno, or the result. */
ET_HIDDEN long et_os_sys6(long n, long a, long b, long c, long d, long e, long f);
/* The same for the start-up path (os/base.h's ET_STARTUP): the result,
 * or -errno; errno itself is not touched (in a shared library errno is a
 * call of libc's, one more lazy binding in every process). */
ET_HIDDEN long et_os_sys_quiet(long n, long a, long b, long c, long d);
/* A small file read whole with those calls (the start-up path's /proc
 * reads): the bytes read, NUL-terminated, at most cap - 1; or -errno. */
ET_HIDDEN long et_os_read_small(const char *path, char *buf, size_t cap);
/* The calling thread gets a descriptor table of its own, holding only the
 * descriptors below keep_below (0: none): what it opens from then on can
 * never take a number the program could be handed, and nothing it closes
 * is the program's (close_range(CLOSE_RANGE_UNSHARE), Linux 5.9; before,
 * unshare(CLONE_FILES) and the copies closed).  0 or an errno. */
ET_HIDDEN int et_os_own_files(int keep_below);
/* pidfd_open(getpid()) (Linux 5.3) and pidfd_getfd (5.6): a copy, in the
 * caller's table, of the program's descriptor fd.  -1 with errno. */
ET_HIDDEN int et_os_pidfd_self(void);
/* The executable's path into buf (NUL-terminated, "" when unknown):
 * /proc/self/exe first (the one qemu-user emulates: its thread-self is the
 * emulator's), then the calling thread's /proc/thread-self/exe (/proc/self
 * is the main thread's, gone once it has ended with pthread_exit). */
ET_HIDDEN void et_os_exe_path(char *buf, size_t n);
ET_HIDDEN int et_os_pidfd_getfd(int pidfd, int fd);
/* The id of the mount a file is on (statx STATX_MNT_ID, Linux 5.8: as
 * mountinfo numbers it): the file open at fd (path NULL), or at path; 0
 * when the kernel cannot say.  errno kept. */
ET_HIDDEN uint64_t et_os_mnt_id(int fd, const char *path);
/* futex on a private int: wait while *p == val (at most ns; 0: no limit);
 * wake every waiter. */
ET_HIDDEN int et_os_futex_wait(int *p, int val, uint64_t ns);
ET_HIDDEN void et_os_futex_wake(int *p);

/* ---------------------------------------------------------- address space */

/* PROT_NONE, private, anonymous, no swap reserved: address space held for
 * later.  exact: only at `at`, never over anything (MAP_FIXED_NOREPLACE;
 * an old kernel may place it elsewhere — the caller checks). */
ET_HIDDEN void *et_os_reserve(void *at, size_t len, bool exact);
/* Private anonymous memory, mapped over [at, at + len) (MAP_FIXED), with
 * prot; hugetlb_size != 0: from the hugetlb pool of pages of that size. */
ET_HIDDEN void *et_os_place_anon(void *at, size_t len, int prot, uint64_t hugetlb_size);
/* A private mapping of fd at off, over [at, at + len) (MAP_FIXED). */
ET_HIDDEN void *et_os_place_file(void *at, size_t len, int prot, int fd, uint64_t off);
/* Anywhere: private anonymous read-write memory (noreserve: no swap
 * reserved for it, MAP_NORESERVE). */
ET_HIDDEN void *et_os_map_anon(size_t len, bool noreserve);
/* Anywhere: a shared read-write mapping of fd (a perf ring). */
ET_HIDDEN void *et_os_map_shared(size_t len, int fd);
ET_HIDDEN int et_os_unmap(void *p, size_t len);
/* mmap(2) itself, the system call (not libc's function, which the shared
 * library wraps): for interpose/mmap.c when libc's cannot be found. */
ET_HIDDEN void *et_os_mmap(void *at, size_t len, int prot, int flags, int fd, off_t off);
ET_HIDDEN int et_os_advise(void *p, size_t len, int advice);
/* Room for one huge page-cache folio: readahead allocates its H-sized
 * folios without waiting for compaction (__GFP_NORETRY), so on a host whose
 * free memory is in small pieces a window read back through a huge mapping
 * comes in small pages although compaction could have made a huge one.
 * MADV_COLLAPSE waits for compaction: the huge page it builds here (on an
 * H-aligned anonymous range with one page touched) is freed at once, to this
 * CPU's free lists, where the read that follows finds it.  0; or the errno
 * of MADV_COLLAPSE (ENOMEM, EAGAIN: no huge page could be made now; EBUSY:
 * not within this process's memory cgroup; EINVAL:
 * before Linux 6.1, or THP disabled for the process).  Costs a 2 MiB clear
 * (and the compaction). */
ET_HIDDEN int et_os_make_room(uint64_t H);
/* prctl(PR_GET_THP_DISABLE): is THP off for this process?  The library's
 * own prctl calls are system calls, never the exported prctl wrapper
 * (interpose/ns.c): that one is the program's. */
ET_HIDDEN bool et_os_thp_disabled(void);
ET_HIDDEN int et_os_protect(void *p, size_t len, int prot);
/*
 * THE SWAP: one mremap(MREMAP_MAYMOVE | MREMAP_FIXED) of [from, from+len)
 * onto `to`.  The kernel does it under the mmap write lock: a thread
 * executing `to` sees the old bytes or the new, never a hole.  On failure
 * the mapping at `to` is untouched (hugetlb: only from Linux 5.16 — see
 * runtime/remap.c).  Returns `to`, or MAP_FAILED.
 */
ET_HIDDEN void *et_os_swap(void *from, size_t len, void *to);
/* Is every page of [p, p + len) mapped?  (mincore; at most 16 KiB.) */
ET_HIDDEN bool et_os_mapped(const void *p, size_t len);
/* Does any page of [addr, addr + len) hold a private (anonymous) copy of a
 * file page?  From /proc/self/pagemap: present (bit 63) and not
 * file-backed (bit 61).  When pagemap cannot be read: yes, the careful
 * answer. */
ET_HIDDEN bool et_os_pages_private(uint64_t addr, uint64_t len);
/* The same through an open /proc/self/pagemap (et_os_pagemap_open: a
 * descriptor or -1), for many checks in a row; a swapped-out page counts as
 * a private copy too (file pages are dropped, never swapped). */
ET_HIDDEN int et_os_pagemap_open(void);
ET_HIDDEN bool et_os_pages_private_in(int fd, uint64_t addr, uint64_t len);
/* Does another process map a page of [off, off + len) of the file open at
 * fd?  1 yes, 0 no, -1 the kernel cannot say (no MADV_POPULATE_READ before
 * Linux 5.14, no pagemap).  A read-only mapping of the range of its own,
 * read in (MADV_POPULATE_READ: a page the file no longer has is an error,
 * never SIGBUS), and pagemap's "exclusively mapped" bit (56, Linux 4.2,
 * readable without privilege) of each page: a page mapped by this probe
 * alone has it.  The probe is gone when this returns. */
ET_HIDDEN int et_os_file_mapped_elsewhere(int fd, uint64_t off, size_t len);
/* How many pages of [addr, addr + len) are in the process's page tables
 * (present or swapped: pagemap), through an open pagemap. */
ET_HIDDEN uint64_t et_os_pages_present_in(int fd, uint64_t addr, uint64_t len);

/* ---------------------------------------------------------- perf, timers */

struct perf_event_attr;
/* perf_event_open for this process on one CPU, close-on-exec: fd or -1. */
ET_HIDDEN long et_os_perf_open(struct perf_event_attr *a, int cpu);
/* A timer on the calling thread's CPU time that sends `signo` (with `tag`
 * as its value) to that thread: 0 and *id, or -1 with errno. */
ET_HIDDEN int et_os_thread_timer_create(int signo, void *tag, int *id);
/* Fire every `ns` nanoseconds from now on: 0 or -1 with errno. */
ET_HIDDEN int et_os_timer_every(int id, long ns);
ET_HIDDEN void et_os_timer_delete(int id);

/* ------------------------------------------------------------- the loader */

/* The next definition of `name` after this library (libc's own, past any
 * wrapper), looked up once and kept in *cache; NULL where there is none
 * (a static program). */
ET_HIDDEN void *et_os_next(void **cache, const char *name);
/* The same lookup without dlsym: NULL where it would ask the loader (for
 * the tests: tests/unit/test_next.c). */
ET_HIDDEN void *et_os_next_own(const char *name);
/* Whether `name` (a function, its default version) may be defined in an
 * object other than this one: 0 where no other loaded object defines it,
 * for sure (the loader's list walked, no lock, no dlsym: only where the
 * list cannot change, a constructor); 1 where one does or the walk cannot
 * tell (dlsym must say). */
ET_HIDDEN int et_os_defined_elsewhere(const char *name);

/* ---------------------------------------------------------------- threads */

#include <pthread.h>
/* Start fn(arg) on a new joinable thread of libc's (past any wrapper),
 * every signal blocked in it, with a stack of `stack` bytes (0: libc's
 * default).  0, or an errno (EAGAIN: RLIMIT_NPROC; EPERM: a seccomp filter
 * that forbids clone; ENOSYS: no pthread_create in a static program). */
ET_HIDDEN int et_os_thread_start(pthread_t *t, void *(*fn)(void *), void *arg, size_t stack);
/* The calling thread's name, as top -H and /proc/PID/task/TID/comm show it. */
ET_HIDDEN void et_os_thread_name(const char *name);
/* The calling thread's kernel id; is thread `tid` still in this process
 * (tgkill with signal 0)? */
ET_HIDDEN long et_os_tid(void);
ET_HIDDEN bool et_os_thread_present(long tid);

/* ---------------------------------------------------------------- signals */

/* libc's own sigaction, past any wrapper of it in the process (this
 * library's interpose/signals.c among them): the library's own handlers
 * are not the program's dispositions. */
ET_HIDDEN int et_os_sigaction(int sig, const struct sigaction *act, struct sigaction *old);

#endif
