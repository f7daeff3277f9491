/*
 * outpaths_reader — a reader that is already counted when a FIFO's writer
 * opens it (tests/fault/outpaths-fifo-reader.sh):
 *
 *   outpaths_reader FIFO OUT
 *
 * Opens FIFO for reading without blocking (so a writer's non-blocking open
 * finds a reader from then on), prints "ready" on stdout, then copies what
 * arrives into OUT until the last writer has come and gone (POLLHUP; the
 * kernel reports no hang-up before the first writer).  Exit 0, 1 on an
 * error, 3 when no writer came within 60 s.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: outpaths_reader FIFO OUT\n");
		return 2;
	}
	int in = open(argv[1], O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	int out = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (in < 0 || out < 0) {
		fprintf(stderr, "outpaths_reader: %s: %s\n", in < 0 ? argv[1] : argv[2], strerror(errno));
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	char buf[65536];
	for (;;) {
		struct pollfd p = { in, POLLIN, 0 };
		int k = poll(&p, 1, 60000);
		if (k == 0)
			return 3;
		if (k < 0) {
			if (errno == EINTR)
				continue;
			return 1;
		}
		ssize_t r = read(in, buf, sizeof buf);
		if (r < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (r < 0)
			return 1;
		if (r == 0)
			return 0;     /* every writer has closed it */
		for (ssize_t off = 0; off < r;) {
			ssize_t w = write(out, buf + off, (size_t)(r - off));
			if (w <= 0)
				return 1;
			off += w;
		}
	}
}
