/*
 * os/sys.c — the library's own system calls, made without libc's
 * syscall(3).
 *
 * The shared library exports a wrapper of syscall(3) (interpose/syscall.c:
 * a program that installs a seccomp filter through it must find the
 * library standing down first), so a call of `syscall` from inside the
 * library would be a call of that wrapper.  The library's own calls are
 * made here instead: the instruction itself on x86-64 and AArch64 (the
 * only architectures whose wrapper is exported), libc's syscall(3)
 * elsewhere.
 *
 * Owns: et_os_sys6 and the calls that exist only as system calls (close_range,
 * pidfd_open, pidfd_getfd, futex, statx's mount id: et_os_mnt_id).
 * May call: libc (errno; syscall(3) on other architectures).
 * Never: keeps state, logs, allocates.
 */
#include "os/os.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__)
ET_STARTUP static long raw6(long n, long a, long b, long c, long d, long e, long f)
{
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	register long r9 __asm__("r9") = f;
	long ret;
	__asm__ volatile("syscall"
	                 : "=a"(ret)
	                 : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
	                 : "rcx", "r11", "memory");
	return ret;
}
#elif defined(__aarch64__)
ET_STARTUP static long raw6(long n, long a, long b, long c, long d, long e, long f)
{
	register long x8 __asm__("x8") = n;
	register long x0 __asm__("x0") = a;
	register long x1 __asm__("x1") = b;
	register long x2 __asm__("x2") = c;
	register long x3 __asm__("x3") = d;
	register long x4 __asm__("x4") = e;
	register long x5 __asm__("x5") = f;
	__asm__ volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5) : "memory");
	return x0;
}
#endif

ET_STARTUP long et_os_sys_quiet(long n, long a, long b, long c, long d)
{
#if defined(__x86_64__) || defined(__aarch64__)
	return raw6(n, a, b, c, d, 0, 0);
#else
	int saved = errno;
	long r = syscall(n, a, b, c, d);
	if (r == -1) {
		r = -errno;
		errno = saved;
	}
	return r;
#endif
}

ET_STARTUP long et_os_sys6(long n, long a, long b, long c, long d, long e, long f)
{
#if defined(__x86_64__) || defined(__aarch64__)
	long r = raw6(n, a, b, c, d, e, f);
	if ((unsigned long)r > -4096ul) {
		errno = (int)-r;
		return -1;
	}
	return r;
#else
	return syscall(n, a, b, c, d, e, f);
#endif
}

/* A small file read whole on the start-up path: open, read and close as
 * system calls of the library's own (no page of libc's the program has
 * not touched, errno untouched).  The bytes read (NUL-terminated, at most
 * cap - 1), or -errno. */
ET_STARTUP long et_os_read_small(const char *path, char *buf, size_t cap)
{
	if (cap == 0)
		return -EINVAL;
	long fd = et_os_sys_quiet(SYS_openat, AT_FDCWD, (long)path, O_RDONLY | O_CLOEXEC, 0);
	if (fd < 0)
		return fd;
	size_t n = 0;
	long r = 0;
	while (n + 1 < cap) {
		r = et_os_sys_quiet(SYS_read, fd, (long)(buf + n), (long)(cap - 1 - n), 0);
		if (r == -EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	buf[n] = '\0';
	et_os_sys_quiet(SYS_close, fd, 0, 0, 0);
	return r < 0 ? r : (long)n;
}

/* Numbers of calls an older <sys/syscall.h> may lack (the same on x86-64
 * and AArch64: they came after the tables were unified). */
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_close_range
#define SYS_close_range 436
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif
#ifndef CLOSE_RANGE_UNSHARE
#define CLOSE_RANGE_UNSHARE (1u << 1)
#endif
#ifndef CLONE_FILES
#define CLONE_FILES 0x00000400
#endif

/* Every descriptor at or above `from` in /proc/thread-self/fd but the one
 * reading it, closed; again until none is left (closing while reading may
 * skip entries). */
static int close_listed(int from)
{
	int d = open("/proc/thread-self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (d < 0)
		return errno;
	for (;;) {
		char buf[2048];
		int closed = 0;
		(void)lseek(d, 0, SEEK_SET);
		for (;;) {
			long n = et_os_sys6(SYS_getdents64, d, (long)buf, sizeof buf, 0, 0, 0);
			if (n <= 0)
				break;
			for (long off = 0; off + 19 < n;) {
				/* struct linux_dirent64: d_ino 8, d_off 8, d_reclen 2, d_type 1, d_name */
				unsigned short reclen;
				memcpy(&reclen, buf + off + 16, sizeof reclen);
				const char *name = buf + off + 19;
				long fd = 0;
				bool num = *name != '\0';
				for (const char *p = name; *p; p++) {
					if (*p < '0' || *p > '9') {
						num = false;
						break;
					}
					fd = fd * 10 + (*p - '0');
				}
				if (num && fd != d && fd >= from) {
					(void)close((int)fd);
					closed++;
				}
				if (!reclen)
					break;
				off += reclen;
			}
		}
		if (!closed)
			break;
	}
	(void)close(d);
	return 0;
}

int et_os_own_files(int keep_below)
{
	/* Linux 5.9: one call, which copies nothing at or above keep_below */
	if (et_os_sys6(SYS_close_range, keep_below, (long)~0u, CLOSE_RANGE_UNSHARE, 0, 0, 0) == 0)
		return 0;
	if (errno != ENOSYS && errno != EINVAL)
		return errno;
	/* before: a copy of the whole table, then what is at or above
	 * keep_below closed in the copy */
	if (et_os_sys6(SYS_unshare, CLONE_FILES, 0, 0, 0, 0, 0) != 0)
		return errno;
	return close_listed(keep_below);
}

void et_os_exe_path(char *buf, size_t n)
{
	if (n == 0)
		return;
	int saved = errno;
	ssize_t l = readlink("/proc/self/exe", buf, n - 1);
	if (l <= 0)
		l = readlink("/proc/thread-self/exe", buf, n - 1);
	buf[l > 0 ? l : 0] = '\0';
	errno = saved;
}

int et_os_pidfd_self(void)
{
	return (int)et_os_sys6(SYS_pidfd_open, (long)getpid(), 0, 0, 0, 0, 0);
}

int et_os_pidfd_getfd(int pidfd, int fd)
{
	return (int)et_os_sys6(SYS_pidfd_getfd, pidfd, fd, 0, 0, 0, 0);
}

/* futex(2) on a private int: wait while *p == val (at most ns, 0: no
 * limit), wake every waiter. */
int et_os_futex_wait(int *p, int val, uint64_t ns)
{
	struct timespec t = { (time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull) };
	return (int)et_os_sys6(SYS_futex, (long)p, 128 /* FUTEX_WAIT_PRIVATE */, val, ns ? (long)&t : 0, 0, 0);
}

void et_os_futex_wake(int *p)
{
	(void)et_os_sys6(SYS_futex, (long)p, 129 /* FUTEX_WAKE_PRIVATE */, 0x7fffffff, 0, 0, 0);
}

uint64_t et_os_mnt_id(int fd, const char *path)
{
#ifdef SYS_statx
	/* struct statx as the kernel lays it out (a libc may have none):
	 * 256 bytes, stx_mask first, stx_mnt_id at byte 144 */
	union {
		uint32_t mask;
		uint64_t q[32];
	} sx;
	memset(&sx, 0, sizeof sx);
	int saved = errno;
	long r = et_os_sys6(SYS_statx, path ? AT_FDCWD : fd, (long)(uintptr_t)(path ? path : ""),
	                    path ? 0 : AT_EMPTY_PATH, 0x00001000 /* STATX_MNT_ID */, (long)(uintptr_t)&sx, 0);
	errno = saved;
	if (r != 0 || !(sx.mask & 0x00001000))
		return 0;
	return sx.q[144 / 8];
#else
	(void)fd, (void)path;
	return 0;
#endif
}
