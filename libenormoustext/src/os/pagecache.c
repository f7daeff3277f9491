/*
 * os/pagecache.c — the page cache and file-system facts the priming of a
 * copied window needs (runtime/remap.c): is part of a file dirty, is the
 * file on a network file system.
 *
 * Owns: cachestat(2) and fstatfs(2) as the library asks them.
 * May call: libc, os/sys.c.
 * Never: changes anything; keeps state.
 */
#include "os/pagecache.h"

#include "os/os.h"

#include <errno.h>
#include <sys/syscall.h>
#include <sys/vfs.h>

#ifndef SYS_cachestat
#define SYS_cachestat 451   /* the same on x86-64 and AArch64 */
#endif

struct k_cachestat_range {
	uint64_t off, len;
};
struct k_cachestat {
	uint64_t nr_cache, nr_dirty, nr_writeback, nr_evicted, nr_recently_evicted;
};

long et_os_dirty_pages(int fd, uint64_t off, uint64_t len)
{
	int saved = errno;
	struct k_cachestat_range r = { off, len };
	struct k_cachestat cs = { 0, 0, 0, 0, 0 };
	long e = et_os_sys6(SYS_cachestat, fd, (long)&r, (long)&cs, 0, 0, 0);
	errno = saved;
	return e != 0 ? -1 : (long)(cs.nr_dirty + cs.nr_writeback);
}

bool et_os_remote_fs(int fd)
{
	static const unsigned long remote[] = {
		0x6969,       /* NFS */
		0xfe534d42,   /* SMB2 */
		0xff534d42,   /* CIFS */
		0x517b,       /* SMB */
		0x01021997,   /* 9P */
		0x65735546,   /* FUSE */
		0x00c36400,   /* Ceph */
		0x5346414f,   /* AFS */
		0x6b414653,   /* kAFS */
		0x47504653,   /* GPFS */
		0x013111a8,   /* IBRIX */
		0x0bd00bd0,   /* Lustre */
	};
	int saved = errno;
	struct statfs st;
	bool r = false;
	if (fstatfs(fd, &st) == 0)
		for (size_t i = 0; i < sizeof remote / sizeof remote[0]; i++)
			r |= (unsigned long)(unsigned int)st.f_type == remote[i];
	errno = saved;
	return r;
}
