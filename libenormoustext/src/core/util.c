/*
 * core/util.c — the small helpers every module shares.
 *
 * Owns: scratch memory (anonymous mappings, never malloc's), the monotonic
 * clock, et_strlcpy, build-ids in hex, THE reader of small files whole
 * (et_read_file, et_read_fd: sysfs and /proc files, a profile), the rule
 * for RLIMIT_AS headroom, %p in a path, the edit distance of every "did
 * you mean" (et_edit_distance: the library's variables, the command's
 * subcommands and units), the byte sink the text writers (json.c,
 * profile.c) write through, the /proc line reader (et_lines: mountinfo,
 * cgroup files) and a mount's device from mountinfo (et_mount_dev: the
 * device /proc/PID/maps gives a btrfs subvolume's files).
 * May call: os (mappings).
 * Never: allocates with malloc, uses a stdio stream, keeps process state
 * (see core/base.h for why).
 */
#include "core/util.h"

#include "os/os.h"

#include <stdio.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

ET_STARTUP void *et_scratch_alloc(size_t len)
{
	void *p = et_os_map_anon(len, false);
	return p == MAP_FAILED ? NULL : p;
}

void et_scratch_free(void *p, size_t len)
{
	if (p)
		et_os_unmap(p, len);
}

uint64_t et_thread_cpu_ns(void)
{
	struct timespec t;
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t) != 0)
		return 0;
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

uint64_t et_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static char fold(char c, bool fold_case)
{
	return fold_case && c >= 'a' && c <= 'z' ? (char)(c - 'a' + 'A') : c;
}

unsigned et_edit_distance(const char *a, const char *b, bool fold_case)
{
	/* three rows of the table: i - 2, i - 1 and i (a swap looks two back) */
	unsigned r[3][ET_EDIT_DISTANCE_MAX + 1];
	size_t la = strlen(a), lb = strlen(b);
	if (la > ET_EDIT_DISTANCE_MAX || lb > ET_EDIT_DISTANCE_MAX)
		return UINT_MAX;
	for (size_t j = 0; j <= lb; j++)
		r[0][j] = (unsigned)j;
	for (size_t i = 1; i <= la; i++) {
		unsigned *cur = r[i % 3], *up = r[(i - 1) % 3], *up2 = r[(i + 1) % 3];
		char x = fold(a[i - 1], fold_case);
		cur[0] = (unsigned)i;
		for (size_t j = 1; j <= lb; j++) {
			char y = fold(b[j - 1], fold_case);
			unsigned best = up[j - 1] + (x != y);
			if (up[j] + 1 < best)
				best = up[j] + 1;
			if (cur[j - 1] + 1 < best)
				best = cur[j - 1] + 1;
			if (i > 1 && j > 1 && x == fold(b[j - 2], fold_case) && fold(a[i - 2], fold_case) == y &&
			    up2[j - 2] + 1 < best)
				best = up2[j - 2] + 1;
			cur[j] = best;
		}
	}
	return r[la % 3][lb];
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

bool et_pread_all(int fd, void *buf, size_t n, uint64_t off)
{
	size_t got = 0;
	while (got < n) {
		ssize_t r = pread(fd, (char *)buf + got, n - got, (off_t)(off + got));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return false;
		got += (size_t)r;
	}
	return true;
}

long et_read_fd(int fd, char *buf, size_t cap)
{
	size_t n = 0;
	if (cap == 0)
		return -EINVAL;
	while (n + 1 < cap) {
		ssize_t r = read(fd, buf + n, cap - 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			buf[n] = '\0';
			return -errno;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	buf[n] = '\0';
	return (long)n;
}

long et_read_file(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	long n = et_read_fd(fd, buf, cap);
	int e = errno;
	close(fd);
	errno = e;
	return n;
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

/*
 * RLIMIT_AS: every byte of address space the library keeps (its object
 * table, the reservation a round stages its copies in, the recorder's
 * buffers) is a byte a program running near its limit no longer has — its
 * next mmap or pthread_create would fail where it would not without the
 * library.  So under a finite limit the library works only while the
 * headroom (limit - VmSize, from /proc/self/statm) is at least
 * max(64 MiB, limit / 16); the copies themselves take no address space
 * once swapped (they replace the text they copy).
 */
bool et_as_headroom_ok(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_AS, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
		return true;
	char buf[128];
	long n = et_read_file("/proc/thread-self/statm", buf, sizeof buf);
	if (n <= 0)
		n = et_read_file("/proc/self/statm", buf, sizeof buf);
	uint64_t pages = 0;
	for (long i = 0; i < n && buf[i] >= '0' && buf[i] <= '9'; i++)
		pages = pages * 10 + (uint64_t)(buf[i] - '0');
	long pg = sysconf(_SC_PAGESIZE);
	uint64_t used = pages * (uint64_t)(pg > 0 ? pg : 4096);
	uint64_t limit = (uint64_t)rl.rlim_cur;
	uint64_t margin = limit / 16 > (64ull << 20) ? limit / 16 : (64ull << 20);
	return n > 0 && pages > 0 && used < limit && limit - used >= margin;
}

/* Expand %p to the process id (several processes of a preloaded tree can
 * then share one ENORMOUSTEXT_REPORT value). */
int et_expand_path(const char *in, char *out, size_t cap)
{
	size_t n = 0;
	for (; *in; in++) {
		char num[24];
		const char *add = in;
		size_t len = 1;
		if (in[0] == '%' && in[1] == 'p') {
			len = (size_t)snprintf(num, sizeof num, "%ld", (long)getpid());
			add = num;
			in++;
		}
		if (n + len + 1 > cap)
			return -ENAMETOOLONG;
		memcpy(out + n, add, len);
		n += len;
	}
	out[n] = '\0';
	return 0;
}

/* ---------------------------------------------------------------- sink */

void et_sink_put(struct et_sink *s, const char *p, size_t n)
{
	if (s->cap == 0) {
		if (n)
			s->write(s->ctx, p, n);
		return;
	}
	while (n > 0) {
		if (s->len == s->cap) {
			s->write(s->ctx, s->buf, s->len);
			s->len = 0;
		}
		size_t c = s->cap - s->len;
		if (c > n)
			c = n;
		memcpy(s->buf + s->len, p, c);
		s->len += c;
		p += c;
		n -= c;
	}
}

void et_sink_flush(struct et_sink *s)
{
	if (s->len)
		s->write(s->ctx, s->buf, s->len);
	s->len = 0;
	if (s->flush)
		s->flush(s->ctx);
}

void et_sink_u64(struct et_sink *s, uint64_t v, unsigned base)
{
	static const char hx[] = "0123456789abcdef";
	char d[24];
	size_t i = sizeof d;
	if (base != 16)
		base = 10;
	do {
		d[--i] = hx[v % base];
		v /= base;
	} while (v);
	et_sink_put(s, d + i, sizeof d - i);
}

/* ------------------------------------------------------------ line reader */

bool et_lines_open(struct et_lines *r, const char *path)
{
	r->eof = r->skipping = r->err = false;
	r->len = r->pos = 0;
	r->fd = open(path, O_RDONLY | O_CLOEXEC);
	return r->fd >= 0;
}

void et_lines_close(struct et_lines *r)
{
	if (r->fd >= 0)
		close(r->fd);
	r->fd = -1;
}

char *et_lines_next(struct et_lines *r)
{
	for (;;) {
		char *s = r->buf + r->pos;
		char *nl = memchr(s, '\n', r->len - r->pos);
		if (nl) {
			*nl = '\0';
			r->pos = (size_t)(nl - r->buf) + 1;
			if (r->skipping) {
				r->skipping = false;
				continue;
			}
			return s;
		}
		if (r->eof) {
			if (r->pos < r->len && !r->skipping) {
				r->buf[r->len] = '\0';
				r->pos = r->len;
				return s;
			}
			return NULL;
		}
		memmove(r->buf, s, r->len - r->pos);
		r->len -= r->pos;
		r->pos = 0;
		if (r->len == sizeof r->buf - 1) {
			r->len = 0;
			r->skipping = true;
		}
		ssize_t n = read(r->fd, r->buf + r->len, sizeof r->buf - 1 - r->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			r->eof = true;
			r->err = n < 0;
			continue;
		}
		r->len += (size_t)n;
	}
}

/* mountinfo: "ID PARENT MAJOR:MINOR ROOT POINT ..." */
bool et_mount_dev(uint64_t mnt_id, uint32_t *maj, uint32_t *min)
{
	if (!mnt_id)
		return false;
	int saved = errno;
	struct et_lines r;
	bool found = false;
	if (et_lines_open(&r, "/proc/self/mountinfo")) {
		for (char *l; !found && (l = et_lines_next(&r));) {
			char *e;
			unsigned long long id = strtoull(l, &e, 10);
			if (e == l || *e != ' ' || id != mnt_id)
				continue;
			char *p = strchr(e + 1, ' ');           /* past the parent's id */
			unsigned long a, b;
			if (p && (a = strtoul(p + 1, &e, 10), *e == ':') && (b = strtoul(e + 1, &p, 10), *p == ' ')) {
				*maj = (uint32_t)a;
				*min = (uint32_t)b;
				found = true;
			}
		}
		et_lines_close(&r);
	}
	errno = saved;
	return found;
}

bool et_file_mount_dev(int fd, const char *path, uint32_t *maj, uint32_t *min)
{
	return et_mount_dev(et_os_mnt_id(fd, path), maj, min);
}
