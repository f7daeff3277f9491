/*
 * os/pagecache.h — what the page cache holds of a file, and where the file
 * lives (pagecache.c): for priming a copied window's file (runtime/remap.c).
 */
#ifndef ET_OS_PAGECACHE_H
#define ET_OS_PAGECACHE_H

#include "os/base.h"

/* Pages of [off, off + len) of fd that are dirty or under writeback
 * (cachestat(2), Linux 6.5): 0 or more, or -1 where the kernel cannot
 * tell (then nothing is known). */
ET_HIDDEN long et_os_dirty_pages(int fd, uint64_t off, uint64_t len);
/* Is fd on a network or user-space file system (NFS, SMB, 9P, FUSE,
 * Ceph, AFS...), where dropping cached pages means reading them again
 * over a wire? */
ET_HIDDEN bool et_os_remote_fs(int fd);

#endif
