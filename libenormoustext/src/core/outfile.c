/*
 * core/outfile.c — writing a file the user named: ENORMOUSTEXT_REPORT,
 * ENORMOUSTEXT_RECORD, the perf map /tmp/perf-PID.map, and the command's
 * every output file (-o, --svg).
 *
 * Owns: THE way a file is written beside its name and renamed into place,
 * and what may be written at a path, and how:
 *
 *   nothing there, or a regular file
 *       a temporary beside it (O_CREAT|O_EXCL|O_NOFOLLOW, a name of its own,
 *       another on EEXIST), written whole, renamed over it: a reader never
 *       sees half a file and a failure leaves the old one as it was.  A new
 *       file is 0600 (0644 with ET_OUT_READABLE; less by the umask or the
 *       directory's default ACL); a replaced one keeps its permission
 *       bits, and its owner and group where fchown may.
 *   a character device or a FIFO
 *       opened as it is (O_NONBLOCK for the open only: a FIFO with no reader
 *       is skipped, ENXIO) and written: /dev/null stays a device.
 *   a symbolic link
 *       followed to its target, as a shell's `>` would (at most 40 links,
 *       relative ones against the link's directory); the rules above apply
 *       there, a dangling link creates its target; the link stays.
 *   anything else (a directory, a socket, a block device)
 *       refused, with the type in the reason.
 *
 * May call: util, log (errno as text).
 * Never: renames over or truncates anything but a regular file; follows
 * a link where the caller said not to (the perf map, in a directory anyone
 * can write); lets the SIGPIPE of a FIFO whose reader left reach the
 * program; allocates, uses stdio streams, or changes errno for its caller
 * (the library runs it in any process, from its constructor and
 * destructor).
 */
#include "core/outfile.h"

#include "core/log.h"
#include "core/util.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define OUT_MAX_LINKS 40
/* a temporary a writer never finished (killed) is left as
 * ".NAME.<12 hex>.tmp"; the name is cut so that it always fits NAME_MAX */
#define OUT_TMP_BASE 200

static const char policy_any[] = " (only a regular file, a character device or a FIFO is written)";
static const char policy_files[] = " (only a regular file is replaced at that name)";

static const char *type_name(mode_t m)
{
	if (S_ISDIR(m)) return "a directory";
	if (S_ISSOCK(m)) return "a socket";
	if (S_ISBLK(m)) return "a block device";
	if (S_ISCHR(m)) return "a character device";
	if (S_ISFIFO(m)) return "a FIFO";
	if (S_ISLNK(m)) return "a symbolic link";
	return "a file of an unknown type";
}

static int copy_path(char *dst, const char *src)
{
	size_t n = strlen(src);
	if (n == 0)
		return -ENOENT;
	if (n >= PATH_MAX)
		return -ENAMETOOLONG;
	memcpy(dst, src, n + 1);
	return 0;
}

/* Follow the symbolic links at the end of o->path (the directories on the
 * way are the kernel's to follow).  *st gets the final file's lstat;
 * *exists is false when nothing is there. */
static int resolve(struct et_out *o, unsigned flags, struct stat *st, bool *exists)
{
	char link[PATH_MAX];
	for (int hops = 0;; hops++) {
		if (lstat(o->path, st) != 0) {
			if (errno != ENOENT)
				return -errno;
			*exists = false;
			return 0;
		}
		*exists = true;
		if (!S_ISLNK(st->st_mode))
			return 0;
		if (flags & ET_OUT_NOFOLLOW) {
			o->type = type_name(st->st_mode);
			o->policy = policy_files;
			return -ELOOP;
		}
		if (hops == OUT_MAX_LINKS)
			return -ELOOP;
		ssize_t n = readlink(o->path, link, sizeof link);
		if (n < 0)
			return -errno;
		if (n == 0)
			return -ENOENT;
		if ((size_t)n >= sizeof link)
			return -ENAMETOOLONG;
		link[n] = '\0';
		/* absolute, or relative to the directory of the link */
		char *slash = strrchr(o->path, '/');
		if (link[0] == '/' || !slash) {
			int e = copy_path(o->path, link);
			if (e)
				return e;
			continue;
		}
		size_t dir = (size_t)(slash - o->path) + 1;
		if (dir + (size_t)n >= PATH_MAX)
			return -ENAMETOOLONG;
		memcpy(o->path + dir, link, (size_t)n + 1);
	}
}

/* A name nobody else would pick: the process, the thread's stack, the clock
 * and a counter, mixed (splitmix64).  O_EXCL decides in the end. */
static uint64_t unique_bits(void)
{
	static unsigned counter;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	uint64_t x = (uint64_t)getpid() * 0x9e3779b97f4a7c15ull ^ (uint64_t)(uintptr_t)&ts ^
	             ((uint64_t)ts.tv_sec << 30) ^ (uint64_t)ts.tv_nsec ^
	             ((uint64_t)__atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED) << 48);
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* The temporary beside o->path: "DIR/.NAME.<12 hex>.tmp", created with
 * mode (less the umask). */
static int make_temp(struct et_out *o, mode_t mode)
{
	static const char hx[] = "0123456789abcdef";
	const char *slash = strrchr(o->path, '/');
	size_t dir = slash ? (size_t)(slash - o->path) + 1 : 0;
	const char *base = o->path + dir;
	size_t blen = strlen(base);
	if (blen > OUT_TMP_BASE)
		blen = OUT_TMP_BASE;
	if (dir + 1 + blen + 1 + 12 + 4 + 1 > PATH_MAX)
		return -ENAMETOOLONG;
	for (int tries = 0; tries < 100; tries++) {
		char *p = o->tmp;
		memcpy(p, o->path, dir);
		p += dir;
		*p++ = '.';
		memcpy(p, base, blen);
		p += blen;
		*p++ = '.';
		uint64_t r = unique_bits();
		for (int i = 0; i < 12; i++, r >>= 4)
			*p++ = hx[r & 15];
		memcpy(p, ".tmp", 5);
		int fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
		if (fd >= 0)
			return fd;
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

/* The regular file being replaced, copied into the temporary (ET_OUT_KEEP). */
static int copy_old(struct et_out *o, const struct stat *old)
{
	int fd = open(o->path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_ino != old->st_ino ||
	    st.st_dev != old->st_dev) {
		close(fd);
		return -EAGAIN;     /* changed under us */
	}
	char buf[4096];
	int err = 0;
	for (;;) {
		ssize_t r = read(fd, buf, sizeof buf);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			err = -errno;
		if (r <= 0)
			break;
		err = et_out_write(o, buf, (size_t)r);
		if (err)
			break;
	}
	close(fd);
	return err;
}

static int open_replace(struct et_out *o, unsigned flags, const struct stat *st, bool exists)
{
	int fd = make_temp(o, flags & ET_OUT_READABLE ? 0644 : 0600);
	if (fd < 0)
		return fd;
	o->fd = fd;
	o->mode = ET_OUT_REPLACE;
	o->existed = exists;
	if (exists) {
		o->dev = (uint64_t)st->st_dev;
		o->ino = (uint64_t)st->st_ino;
		/* owner first: fchown clears the set-id bits, which are dropped
		 * anyway (a report is no program) */
		if ((st->st_uid != geteuid() || st->st_gid != getegid()) && fchown(fd, st->st_uid, st->st_gid) != 0 &&
		    st->st_gid != getegid())
			(void)!fchown(fd, (uid_t)-1, st->st_gid);   /* the group alone, where we are in it */
		/* (a file system without modes refuses: its files have none to keep) */
		(void)!fchmod(fd, st->st_mode & 0777);
		if (flags & ET_OUT_KEEP) {
			int e = copy_old(o, st);
			if (e) {
				et_out_abort(o);
				return e;
			}
		}
	}
	return 0;
}

static int open_direct(struct et_out *o, const struct stat *st)
{
	int fd = open(o->path, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		if (e == ENXIO && S_ISFIFO(st->st_mode)) {
			o->type = "a FIFO with no reader";
			o->policy = "";
			o->skipped = true;
		}
		return -e;
	}
	struct stat now;
	if (fstat(fd, &now) != 0 || (now.st_mode & S_IFMT) != (st->st_mode & S_IFMT) ||
	    now.st_ino != st->st_ino || now.st_dev != st->st_dev) {
		close(fd);
		return -EAGAIN;     /* replaced between the look and the open */
	}
	/* blocking from now on: the whole content goes to the reader */
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	o->fd = fd;
	o->mode = ET_OUT_DIRECT;
	return 0;
}

int et_out_open(struct et_out *o, const char *path, unsigned flags)
{
	int saved = errno;
	memset(o, 0, offsetof(struct et_out, path));
	o->fd = -1;
	o->tmp[0] = '\0';
	int e = copy_path(o->path, path);
	struct stat st;
	bool exists = false;
	/* a file replaced between the look and the open: look again, once */
	for (int round = 0; !e && round < 2; round++) {
		e = resolve(o, flags, &st, &exists);
		if (e)
			break;
		if (!exists || S_ISREG(st.st_mode)) {
			e = open_replace(o, flags, &st, exists);
		} else if ((S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) && !(flags & ET_OUT_FILES_ONLY)) {
			e = open_direct(o, &st);
		} else {
			o->type = type_name(st.st_mode);
			o->policy = flags & ET_OUT_FILES_ONLY ? policy_files : policy_any;
			e = S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
		}
		if (e != -EAGAIN)
			break;
		if (round == 0)
			e = 0;
	}
	errno = saved;
	return e;
}

/* SIGPIPE blocked around a write to a FIFO or a device, and one it raised
 * taken back (it is sent to this very thread): the reader leaving gives
 * EPIPE here, never a dead program. */
struct pipe_guard {
	sigset_t old;
	bool pending_before, on;
};

static void guard_on(struct pipe_guard *g)
{
	sigset_t pipe, pend;
	sigemptyset(&pipe);
	sigaddset(&pipe, SIGPIPE);
	g->on = pthread_sigmask(SIG_BLOCK, &pipe, &g->old) == 0;
	g->pending_before = g->on && sigpending(&pend) == 0 && sigismember(&pend, SIGPIPE) == 1;
}

static void guard_off(struct pipe_guard *g, bool got_epipe)
{
	if (!g->on)
		return;
	if (got_epipe && !g->pending_before) {
		sigset_t pipe;
		sigemptyset(&pipe);
		sigaddset(&pipe, SIGPIPE);
		struct timespec zero = { 0, 0 };
		while (sigtimedwait(&pipe, NULL, &zero) < 0 && errno == EINTR)
			;
	}
	pthread_sigmask(SIG_SETMASK, &g->old, NULL);
}

int et_out_write(struct et_out *o, const void *buf, size_t n)
{
	if (o->err)
		return -o->err;
	if (o->fd < 0)
		return -EBADF;
	int saved = errno;
	struct pipe_guard g = { .on = false };
	if (o->mode == ET_OUT_DIRECT)
		guard_on(&g);
	const char *p = buf;
	while (n > 0) {
		ssize_t w = write(o->fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			o->err = w < 0 ? errno : EIO;
			break;
		}
		p += w;
		n -= (size_t)w;
	}
	if (o->mode == ET_OUT_DIRECT)
		guard_off(&g, o->err == EPIPE);
	errno = saved;
	return -o->err;
}

int et_out_commit(struct et_out *o)
{
	int saved = errno;
	int err = o->err;
	if (o->fd >= 0 && close(o->fd) != 0 && errno != EINTR && !err)
		err = errno;
	o->fd = -1;
	if (o->mode == ET_OUT_REPLACE) {
		/* only a regular file (the one we looked at) or nothing is
		 * renamed over: a FIFO or device put there since stays */
		struct stat st;
		if (!err && lstat(o->path, &st) == 0 &&
		    (!S_ISREG(st.st_mode) ||
		     (o->existed && ((uint64_t)st.st_dev != o->dev || (uint64_t)st.st_ino != o->ino)))) {
			if (!S_ISREG(st.st_mode)) {
				o->type = type_name(st.st_mode);
				o->policy = policy_files;
				err = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
			} else {
				err = EAGAIN;
			}
		}
		if (!err && rename(o->tmp, o->path) != 0)
			err = errno;
		if (err)
			unlink(o->tmp);
	}
	o->mode = ET_OUT_CLOSED;
	errno = saved;
	return -err;
}

void et_out_abort(struct et_out *o)
{
	int saved = errno;
	if (o->fd >= 0)
		close(o->fd);
	o->fd = -1;
	if (o->mode == ET_OUT_REPLACE)
		unlink(o->tmp);
	o->mode = ET_OUT_CLOSED;
	errno = saved;
}

const char *et_out_why(const struct et_out *o, char *buf, size_t cap)
{
	if (!o->type)
		return NULL;
	snprintf(buf, cap, "%s%s", o->type, o->policy ? o->policy : "");
	return buf;
}

const char *et_out_errno_text(int e, char buf[24])
{
	switch (e) {
	case ENXIO: return "no such device or address";
	case EISDIR: return "is a directory";
	case ENOTDIR: return "not a directory";
	case ELOOP: return "too many levels of symbolic links";
	case EFBIG: return "file too large";
	case EPIPE: return "broken pipe";
	case EXDEV: return "invalid cross-device link";
	case EDQUOT: return "disk quota exceeded";
	case ETXTBSY: return "text file busy";
	case EAGAIN: return "the file changed while it was written";
	default: return et_errno_text(e, buf);
	}
}

static void sink_write(void *o, const char *s, size_t n)
{
	(void)et_out_write(o, s, n);     /* an error stays in o->err */
}

void et_out_sink(struct et_sink *s, struct et_out *o, char *buf, size_t cap)
{
	*s = (struct et_sink){ .write = sink_write, .ctx = o, .buf = buf, .cap = cap };
}
