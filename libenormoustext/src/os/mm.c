/*
 * os/mm.c — memory-management system calls (see os.h).
 *
 * Owns: every mmap, munmap, mremap, madvise, mprotect and mincore of the
 * library, and the read of /proc/self/pagemap (with a probe mapping of a
 * file's range: does another process map any of it,
 * et_os_file_mapped_elsewhere).
 * May call: libc, os/sys.c.  mmap, mprotect and madvise are system calls
 * made with et_os_sys6, not libc's functions: the shared library exports
 * wrappers of mmap and mprotect (interpose/mmap.c, for ENORMOUSTEXT_MODE's
 * JIT code), which are the program's; the library's own calls never go
 * through them.
 * Never: decides anything (the callers do), logs, allocates, keeps state.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE   /* mremap: without its prototype the result is truncated */
#endif
#include "os/os.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef MREMAP_MAYMOVE
#define MREMAP_MAYMOVE 1
#endif
#ifndef MREMAP_FIXED
#define MREMAP_FIXED 2
#endif

/* The system calls themselves (see the banner). */
ET_STARTUP static void *sys_mmap(void *at, size_t len, int prot, int flags, int fd, off_t off)
{
	return (void *)et_os_sys6(SYS_mmap, (long)at, (long)len, (long)prot, (long)flags, (long)fd, (long)off);
}

void *et_os_mmap(void *at, size_t len, int prot, int flags, int fd, off_t off)
{
	return sys_mmap(at, len, prot, flags, fd, off);
}

void *et_os_reserve(void *at, size_t len, bool exact)
{
	return sys_mmap(at, len, PROT_NONE,
	            MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | (exact ? MAP_FIXED_NOREPLACE : 0), -1, 0);
}

static unsigned log2u64(uint64_t v)
{
	unsigned n = 0;
	while (v > 1) {
		v >>= 1;
		n++;
	}
	return n;
}

void *et_os_place_anon(void *at, size_t len, int prot, uint64_t hugetlb_size)
{
	int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED;
	if (hugetlb_size)
		flags |= MAP_HUGETLB | (int)(log2u64(hugetlb_size) << MAP_HUGE_SHIFT);
	return sys_mmap(at, len, prot, flags, -1, 0);
}

void *et_os_place_file(void *at, size_t len, int prot, int fd, uint64_t off)
{
	return sys_mmap(at, len, prot, MAP_PRIVATE | MAP_FIXED, fd, (off_t)off);
}

ET_STARTUP void *et_os_map_anon(size_t len, bool noreserve)
{
	return sys_mmap(NULL, len, PROT_READ | PROT_WRITE,
	            MAP_PRIVATE | MAP_ANONYMOUS | (noreserve ? MAP_NORESERVE : 0), -1, 0);
}

void *et_os_map_shared(size_t len, int fd)
{
	return sys_mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
}

int et_os_unmap(void *p, size_t len)
{
	return munmap(p, len);
}

bool et_os_thp_disabled(void)
{
	return et_os_sys6(SYS_prctl, (long)PR_GET_THP_DISABLE, 0, 0, 0, 0, 0) > 0;
}

int et_os_advise(void *p, size_t len, int advice)
{
	return (int)et_os_sys6(SYS_madvise, (long)p, (long)len, (long)advice, 0, 0, 0);
}

int et_os_make_room(uint64_t H)
{
	int saved = errno;
	char *r = sys_mmap(NULL, (size_t)(2 * H), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
	                   -1, 0);
	if (r == MAP_FAILED) {
		errno = saved;
		return ENOMEM;
	}
	char *a = (char *)(((uintptr_t)r + H - 1) & ~(uintptr_t)(H - 1));
	/* one page is enough: MADV_COLLAPSE fills the rest with zeroes */
	*(volatile char *)a = 1;
	int e = et_os_advise(a, (size_t)H, MADV_COLLAPSE) == 0 ? 0 : errno;
	et_os_unmap(r, (size_t)(2 * H));
	errno = saved;
	return e;
}

int et_os_protect(void *p, size_t len, int prot)
{
	return (int)et_os_sys6(SYS_mprotect, (long)p, (long)len, (long)prot, 0, 0, 0);
}

void *et_os_swap(void *from, size_t len, void *to)
{
	return mremap(from, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, to);
}

/* mincore fails with ENOMEM on any hole.  (Pages of 4 KiB are assumed: a
 * larger page only makes the span checked larger.) */
bool et_os_mapped(const void *p, size_t len)
{
	uintptr_t pg = (uintptr_t)p & ~(uintptr_t)4095;
	unsigned char vec[4];
	size_t span = ((uintptr_t)p + len - pg + 4095) & ~(size_t)4095;
	if (span > 4 * 4096)
		return false;
	return mincore((void *)pg, span, vec) == 0;
}

int et_os_pagemap_open(void)
{
	/* the calling thread's view: /proc/self is the main thread's, whose
	 * memory is gone once it has ended (pthread_exit) */
	int fd = open("/proc/thread-self/pagemap", O_RDONLY | O_CLOEXEC);
	return fd >= 0 || errno != ENOENT ? fd : open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
}

bool et_os_pages_private_in(int fd, uint64_t addr, uint64_t len)
{
	long pg = sysconf(_SC_PAGESIZE);
	if (pg <= 0 || fd < 0)
		return true;
	uint64_t e[512];
	uint64_t pages = len / (uint64_t)pg;
	for (uint64_t done = 0; done < pages;) {
		uint64_t n = pages - done < 512 ? pages - done : 512;
		off_t off = (off_t)((addr / (uint64_t)pg + done) * 8);
		ssize_t r = pread(fd, e, n * 8, off);
		if (r != (ssize_t)(n * 8))
			return true;
		for (uint64_t i = 0; i < n; i++) {
			bool present = (e[i] >> 63) & 1, swapped = (e[i] >> 62) & 1, file = (e[i] >> 61) & 1;
			/* a page of a private file mapping that is swapped out was a
			 * private copy: file pages are dropped, never swapped */
			if ((present && !file) || swapped)
				return true;
		}
		done += n;
	}
	return false;
}

uint64_t et_os_pages_present_in(int fd, uint64_t addr, uint64_t len)
{
	long pg = sysconf(_SC_PAGESIZE);
	if (pg <= 0 || fd < 0)
		return 0;
	uint64_t e[512], n_present = 0;
	uint64_t pages = len / (uint64_t)pg;
	for (uint64_t done = 0; done < pages;) {
		uint64_t n = pages - done < 512 ? pages - done : 512;
		off_t off = (off_t)((addr / (uint64_t)pg + done) * 8);
		ssize_t r = pread(fd, e, n * 8, off);
		if (r != (ssize_t)(n * 8))
			break;
		for (uint64_t i = 0; i < n; i++)
			n_present += ((e[i] >> 63) & 1) | ((e[i] >> 62) & 1);
		done += n;
	}
	return n_present;
}

bool et_os_pages_private(uint64_t addr, uint64_t len)
{
	int fd = et_os_pagemap_open();
	if (fd < 0)
		return true;
	bool patched = et_os_pages_private_in(fd, addr, len);
	close(fd);
	return patched;
}

int et_os_file_mapped_elsewhere(int fd, uint64_t off, size_t len)
{
	long pg = sysconf(_SC_PAGESIZE);
	if (pg <= 0 || len == 0)
		return -1;
	int saved = errno;
	void *p = et_os_mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, (off_t)off);
	if (p == MAP_FAILED) {
		errno = saved;
		return -1;
	}
	int r = -1;
	int pm = -1;
	if (et_os_advise(p, len, MADV_POPULATE_READ) == 0 && (pm = et_os_pagemap_open()) >= 0) {
		uint64_t e[512];
		uint64_t pages = len / (uint64_t)pg, addr = (uint64_t)(uintptr_t)p;
		r = 0;
		for (uint64_t done = 0; done < pages && r == 0;) {
			uint64_t n = pages - done < 512 ? pages - done : 512;
			ssize_t got = pread(pm, e, n * 8, (off_t)((addr / (uint64_t)pg + done) * 8));
			if (got != (ssize_t)(n * 8)) {
				r = -1;
				break;
			}
			for (uint64_t i = 0; i < n; i++)
				if (((e[i] >> 63) & 1) && !((e[i] >> 56) & 1)) {
					r = 1;   /* present, and not this mapping's alone */
					break;
				}
			done += n;
		}
	}
	if (pm >= 0)
		close(pm);
	et_os_unmap(p, len);
	errno = saved;
	return r;
}
