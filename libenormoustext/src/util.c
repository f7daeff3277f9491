/*
 * util.c — scratch memory, clocks, strings, and reading small files, all
 * without malloc or stdio (see internal.h for why).
 */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

void *et_scratch_alloc(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

void et_scratch_free(void *p, size_t len)
{
	if (p)
		munmap(p, len);
}

uint64_t et_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

size_t et_strlcpy(char *dst, const char *src, size_t cap)
{
	size_t n = strlen(src);
	if (cap) {
		size_t c = n < cap - 1 ? n : cap - 1;
		memcpy(dst, src, c);
		dst[c] = '\0';
	}
	return n;
}

long et_read_file(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	size_t n = 0;
	while (n + 1 < cap) {
		ssize_t r = read(fd, buf + n, cap - 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;
			close(fd);
			return -e;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	buf[n] = '\0';
	return (long)n;
}

void et_hex_build_id(const unsigned char *d, size_t n, char out[41])
{
	static const char hx[] = "0123456789abcdef";
	if (n > 20)
		n = 20;
	for (size_t i = 0; i < n; i++) {
		out[2 * i] = hx[d[i] >> 4];
		out[2 * i + 1] = hx[d[i] & 15];
	}
	out[2 * n] = '\0';
}
