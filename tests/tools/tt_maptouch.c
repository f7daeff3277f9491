/*
 * tt_maptouch FILE SECONDS — map FILE read-only, touch every page (so the
 * page cache holds it and this process maps it), say "ready", and sleep.
 * For `enormoustext prime` on a file a running process holds.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: tt_maptouch FILE SECONDS\n");
		return 2;
	}
	int fd = open(argv[1], O_RDONLY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0 || st.st_size == 0) {
		perror(argv[1]);
		return 1;
	}
	volatile const char *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	long pg = sysconf(_SC_PAGESIZE);
	unsigned sum = 0;
	for (off_t o = 0; o < st.st_size; o += pg)
		sum += (unsigned char)p[o];
	printf("ready %u\n", sum & 1);
	fflush(stdout);
	sleep((unsigned)atoi(argv[2]));
	return 0;
}
