/*
 * cache_small FILE... — bring each file into the page cache in small (base
 * page) folios, the way a system that has run a program for a while
 * usually holds it: its clean, unmapped pages are dropped first, then it
 * is read one page at a time with readahead off (POSIX_FADV_RANDOM), so
 * that no large folio is ever allocated.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long pg = sysconf(_SC_PAGESIZE);
	char buf[65536];
	int rc = 0;
	if (pg <= 0 || pg > (long)sizeof buf)
		pg = 4096;
	for (int i = 1; i < argc; i++) {
		int fd = open(argv[i], O_RDONLY);
		if (fd < 0) {
			perror(argv[i]);
			rc = 1;
			continue;
		}
		posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
		posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
		off_t off = 0;
		ssize_t n;
		while ((n = pread(fd, buf, (size_t)pg, off)) > 0)
			off += n;
		close(fd);
	}
	return rc;
}
