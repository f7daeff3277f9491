/*
 * tools/enormoustext/cmd/daemon_files.c — `enormoustext daemon`'s table of
 * the files it knows (daemon.h): each learnt once (from an exec event, a
 * process's maps or STATE/known), indexed by device and inode, primed
 * (pagecache.c) and, while processes map its small pages, tried again
 * later or as soon as the last of them ends (their pidfds, polled by
 * daemon.c); a primed file seen in use --recheck later is checked and
 * primed again; STATE/known and STATE/daemon.json say what it knows.
 *
 * Owns: the table, its index, each file's state and what it says of them.
 * May call: pagecache.c (et_tool_prime_file), files.c (its state written
 * whole), core (json), msg.c, common.c.
 * Never: drops a page a process maps or that is dirty (pagecache.c never
 * does); changes a file.
 */
#include "daemon.h"

#include "host.h"

#include "core/json.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

struct et_daemon et_dm = { .state = ET_TOOL_DAEMON_STATE, .host_root = "", .recheck_ns = 60ull * 1000000000ull, .fan = -1 };

static const char *const state_name[] = { "pending", "primed", "nothing to prime", "gave up", "left alone" };

/* (dev, ino) -> index + 1, open addressing, at most half full: an exec
 * event's lookup costs the same with 50,000 files known as with 5 */
static uint32_t *g_index;
static size_t g_capindex, g_capfiles;

/* the longest wait between two tries: 64 s (1 s << 6); 8 s for windows
 * processes hold (their pidfds usually say sooner; where the processes
 * were gone before they could be named, in a storm of short programs,
 * the next try is at most 8 s after the storm), and for a file open for
 * writing */
#define RETRY_MAX_SHIFT 6u
#define RETRY_MAX_SHIFT_HELD 3u
#define ET_DAEMON_FILES 50000
#define RETRY_TRIES 8u

uint64_t et_daemon_now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static size_t slot_of(dev_t dev, ino_t ino)
{
	uint64_t h = ((uint64_t)ino * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)dev * 0xc2b2ae3d27d4eb4full);
	return (size_t)(h ^ (h >> 29)) & (g_capindex - 1);
}

struct et_dfile *et_daemon_find(dev_t dev, ino_t ino)
{
	if (!g_capindex)
		return NULL;
	for (size_t i = slot_of(dev, ino);; i = (i + 1) & (g_capindex - 1)) {
		uint32_t at = g_index[i];
		if (!at)
			return NULL;
		if (et_dm.files[at - 1].dev == dev && et_dm.files[at - 1].ino == ino)
			return &et_dm.files[at - 1];
	}
}

/* et_dm.files[et_dm.nfiles - 1] just added: indexed (the index doubled first
 * when it would be more than half full); false without memory */
static bool index_last(void)
{
	if (2 * et_dm.nfiles > g_capindex) {
		size_t cap = g_capindex ? 2 * g_capindex : 1024;
		uint32_t *t = calloc(cap, sizeof *t);
		if (!t)
			return false;
		free(g_index);
		g_index = t;
		g_capindex = cap;
		for (size_t i = 0; i + 1 < et_dm.nfiles; i++) {
			size_t j = slot_of(et_dm.files[i].dev, et_dm.files[i].ino);
			while (g_index[j])
				j = (j + 1) & (cap - 1);
			g_index[j] = (uint32_t)(i + 1);
		}
	}
	size_t j = slot_of(et_dm.files[et_dm.nfiles - 1].dev, et_dm.files[et_dm.nfiles - 1].ino);
	while (g_index[j])
		j = (j + 1) & (g_capindex - 1);
	g_index[j] = (uint32_t)et_dm.nfiles;
	return true;
}

static void drop_holders(struct et_dfile *k)
{
	for (int i = 0; i < k->nhold; i++)
		close(k->hold[i]);
	if (k->nhold)
		et_dm.nholding--;
	k->nhold = 0;
}

/* The processes r names map k's small pages: a pidfd each, so that the
 * main loop tries k again once the last has ended.  Where there are more
 * than r holds, or no pidfd can be had (a kernel before 5.3), the
 * backoff alone. */
static void watch_holders(struct et_dfile *k, const struct et_tool_primed *r)
{
	if (r->more_pids || r->npids <= 0)
		return;
	for (int i = 0; i < r->npids && i < (int)(sizeof k->hold / sizeof *k->hold); i++) {
		int fd = (int)syscall(SYS_pidfd_open, r->pids[i], 0);
		if (fd >= 0) {
			k->hold[k->nhold++] = fd;
			continue;
		}
		if (errno == ESRCH)   /* ended already */
			continue;
		for (int j = 0; j < k->nhold; j++)
			close(k->hold[j]);
		k->nhold = 0;
		return;
	}
	if (k->nhold)
		et_dm.nholding++;
	else   /* all ended meanwhile: again a second after this try */
		k->next_ns = k->primed_ns + RETRY_FIRST_NS;
}

/* k->held_by: the processes r names, with their command names. */
static void name_holders(struct et_dfile *k, const struct et_tool_primed *r)
{
	size_t n = 0;
	k->held_by[0] = '\0';
	for (int i = 0; i < r->npids && n < sizeof k->held_by; i++) {
		char p[64], comm[32] = "?";
		snprintf(p, sizeof p, "/proc/%ld/comm", (long)r->pids[i]);
		long got = et_tool_read(p, comm, sizeof comm);
		if (got > 0)
			comm[strcspn(comm, "\n")] = '\0';
		n += (size_t)snprintf(k->held_by + n, sizeof k->held_by - n, "%spid %ld (%s)", i ? ", " : "",
		                      (long)r->pids[i], comm);
	}
	if (r->more_pids && n < sizeof k->held_by)
		snprintf(k->held_by + n, sizeof k->held_by - n, " and more");
}

/* Prime k once (through its open descriptor), and decide what next. */
void et_daemon_prime_one(struct et_dfile *k)
{
	drop_holders(k);
	k->held_by[0] = '\0';
	char via[64];
	snprintf(via, sizeof via, "/proc/self/fd/%d", k->fd);
	struct et_tool_primed r;
	memset(&r, 0, sizeof r);
	k->tries++;
	k->primed_now = 0;
	k->primed_ns = et_daemon_now_ns();
	et_dm.dirty = true;
	int failed = et_tool_prime_file(via, et_dm.H, false, &r);
	static int said = -1;
	int cerr = 0, c = et_tool_collapse_file_text(&cerr);
	if (et_dm.verbose && c >= 0 && c != said) {
		if (c)
			et_tool_err("this kernel collapses file text in place (MADV_COLLAPSE): windows are primed where "
			            "they are, even those processes map");
		else
			et_tool_err("this kernel does not collapse file text in place (MADV_COLLAPSE: %s): windows are "
			            "dropped and read back once no process maps them", strerror(cerr));
		said = c;
	}
	if (failed) {
		k->state = DF_GAVE_UP;
	} else if (!r.congruent || r.windows == 0) {
		/* no whole window, or none at an address congruent with its
		 * offset (a PIE executable with 4 KiB p_align): the page
		 * cache cannot make it huge; the library's copies can */
		k->state = DF_NOT_CONGRUENT;
		k->windows = r.windows;
	} else {
		k->windows = r.windows;
		k->huge = r.n[ET_WIN_HUGE_BEFORE] + r.n[ET_WIN_PRIMED];
		k->primed_now = r.n[ET_WIN_PRIMED];
		k->held = r.n[ET_WIN_HELD];
		/* no room for a huge page now (memory in small pieces) passes,
		 * and so does a writer (the file is never touched while open
		 * for writing: an install under way): tried again like a window
		 * held by a process */
		bool writing = r.n[ET_WIN_WRITING] != 0;
		bool done = k->huge == k->windows || (r.n[ET_WIN_NO_FOLIOS] && !r.n[ET_WIN_NO_ROOM] && !writing);
		const char *was = k->why;
		k->why = writing ? "open for writing: primed once it is closed" : NULL;
		if (et_dm.verbose && writing && was != k->why)
			et_tool_err("%s: %s", k->path, k->why);
		/* windows that processes map, and a file open for writing, are
		 * never given up on: they can be primed once those processes
		 * end (a long build runs its compiler all along) or the writer
		 * closes it */
		k->state = done ? DF_PRIMED : k->tries >= RETRY_TRIES && !k->held && !writing ? DF_GAVE_UP : DF_PENDING;
	}
	if (k->state == DF_PENDING) {
		unsigned cap = k->held || k->why ? RETRY_MAX_SHIFT_HELD : RETRY_MAX_SHIFT;
		unsigned sh = k->tries - 1 < cap ? k->tries - 1 : cap;
		k->next_ns = et_daemon_now_ns() + (RETRY_FIRST_NS << sh);
		if (k->held) {
			watch_holders(k, &r);
			name_holders(k, &r);
		}
		return;
	}
	if (et_dm.verbose && k->state == DF_NOT_CONGRUENT)
		et_tool_err("%s: nothing to prime (%s)", k->path,
		            r.windows ? "its windows are not congruent with their load address" : "no whole huge-page window");
	else if (et_dm.verbose)
		et_tool_err("%s: %s (%llu of %llu windows huge in the page cache%s)", k->path, state_name[k->state],
		            (unsigned long long)k->huge, (unsigned long long)k->windows,
		            k->state != DF_PRIMED || k->huge == k->windows ? ""
		            : r.n[ET_WIN_NO_FOLIOS]                      ? ": the filesystem gave small folios"
		                                                         : "");
	close(k->fd);
	k->fd = -1;
}

/* ---- filesystems it primes only when asked ------------------------------ */

static bool type_in(const char *type, const char *const *list)
{
	for (int i = 0; list[i]; i++)
		if (!strcmp(type, list[i]))
			return true;
	return false;
}

static const char *const local_types[] = { "ext2", "ext3", "ext4", "xfs", "btrfs", "tmpfs", "f2fs", "overlay",
	                                   "squashfs", "erofs", "vfat", "jfs", "reiserfs", "bcachefs", NULL };
static const char *const network_types[] = { "nfs", "nfs4", "cifs", "smb3", "smb2", "9p", "ceph", "afs",
	                                     "coda", "ocfs2", "gfs2", "lustre", NULL };

bool et_daemon_fs_watched(const char *type)
{
	if (type_in(type, local_types))
		return true;
	if (et_dm.fuse && (!strcmp(type, "fuse") || !strcmp(type, "fuseblk") || !strncmp(type, "fuse.", 5)))
		return true;
	return et_dm.network_fs && type_in(type, network_types);
}

/* Why a file open at fd is left alone (its filesystem, from fstatfs: a
 * file reached through another mount namespace has no mountinfo line
 * here), or NULL: it may be primed. */
static const char *left_alone(int fd)
{
	struct statfs f;
	if (fstatfs(fd, &f) != 0)
		return NULL;
	switch ((unsigned long)f.f_type) {
	case 0x65735546ul:   /* FUSE_SUPER_MAGIC */
		return et_dm.fuse ? NULL : "on a FUSE filesystem: --fuse primes such files";
	case 0x6969ul:       /* NFS */
	case 0x517bul:       /* SMB */
	case 0xff534d42ul:   /* CIFS */
	case 0xfe534d42ul:   /* SMB2 */
	case 0x01021997ul:   /* 9p */
	case 0x00c36400ul:   /* Ceph */
	case 0x5346414ful:   /* AFS */
	case 0x6b414653ul:   /* kAFS */
	case 0x73757245ul:   /* Coda */
	case 0x7461636ful:   /* OCFS2 */
	case 0x01161970ul:   /* GFS2 */
	case 0x0bd00bd0ul:   /* Lustre */
		return et_dm.network_fs ? NULL : "on a network filesystem: --network-fs primes such files";
	default:
		return NULL;
	}
}

/* Is path one --only lets it learn? */
static bool wanted(const char *path)
{
	if (!et_dm.nonly)
		return true;
	for (int i = 0; i < et_dm.nonly; i++) {
		size_t n = strlen(et_dm.only[i]);
		while (n > 1 && et_dm.only[i][n - 1] == '/')
			n--;
		if (!strncmp(path, et_dm.only[i], n) && (path[n] == '/' || path[n] == '\0'))
			return true;
	}
	return false;
}

/* path as the host names it (a host process's maps and exec events give
 * the host's paths, whatever root this daemon runs in), here: under
 * --host-root; false when that does not fit */
static bool here_path(const char *path, char *buf, size_t size)
{
	int n = snprintf(buf, size, "%s%s", et_dm.host_root, path);
	return n > 0 && (size_t)n < size;
}

/* A file it knows, in use again (fd: open on it, taken over): primed
 * once more if it was primed --recheck ago or longer (the kernel may have
 * evicted its folios, or split them), else nothing. */
void et_daemon_recheck(struct et_dfile *k, int fd)
{
	if (k->state != DF_PRIMED || k->fd >= 0 || et_daemon_now_ns() - k->primed_ns < et_dm.recheck_ns) {
		close(fd);
		return;
	}
	k->fd = fd;
	k->tries = 0;
	et_daemon_prime_one(k);
	/* counted when the check found windows no longer huge */
	if (k->primed_now || k->state == DF_PENDING) {
		k->again++;
		if (et_dm.verbose)
			et_tool_err("%s: checked again: %llu window%s primed again%s", k->path,
			            (unsigned long long)k->primed_now, et_tool_plural(k->primed_now, "s"),
			            k->state == DF_PENDING ? ", more once no process maps their small pages" : "");
	}
}

/* A file a process maps executable (fd: open on it, taken over; st: its
 * fstat): what it knows of it, learnt now if new (NULL: not wanted, or no
 * room). */
struct et_dfile *et_daemon_learn_st(int fd, const char *path, const struct stat *st)
{
	struct et_dfile *k = et_daemon_find(st->st_dev, st->st_ino);
	if (k) {
		et_daemon_recheck(k, fd);
		return k;
	}
	if (!wanted(path)) {
		close(fd);
		return NULL;
	}
	/* memory bounded: at most ET_DAEMON_FILES files (a few MiB), then
	 * nothing new is learnt (said once) */
	char *copy = et_dm.nfiles < ET_DAEMON_FILES ? strdup(path) : NULL;
	struct et_dfile *t = copy ? et_tool_grow(et_dm.files, &g_capfiles, et_dm.nfiles + 1, sizeof *et_dm.files) : NULL;
	if (!t) {
		static bool said;
		if (!said && et_dm.nfiles >= ET_DAEMON_FILES)
			et_tool_err("%d files known: no more are learnt", ET_DAEMON_FILES);
		said |= et_dm.nfiles >= ET_DAEMON_FILES;
		free(copy);
		close(fd);
		return NULL;
	}
	et_dm.files = t;
	k = &et_dm.files[et_dm.nfiles++];
	memset(k, 0, sizeof *k);
	k->dev = st->st_dev;
	k->ino = st->st_ino;
	if (!index_last()) {
		et_dm.nfiles--;
		free(copy);
		close(fd);
		return NULL;
	}
	k->fd = fd;
	k->path = copy;
	struct stat here;
	char at[PATH_MAX];
	k->host = path[0] == '/' && here_path(path, at, sizeof at) && stat(at, &here) == 0 &&
	          here.st_dev == st->st_dev && here.st_ino == st->st_ino;
	k->state = DF_PENDING;
	if (et_dm.verbose)
		et_tool_err("learnt %s", path);
	k->why = left_alone(fd);
	if (k->why) {
		/* known, so that its exec is quieted like any settled file's */
		k->state = DF_LEFT_ALONE;
		et_dm.dirty = true;
		if (et_dm.verbose)
			et_tool_err("%s: left alone (%s)", k->path, k->why);
		close(fd);
		k->fd = -1;
		return k;
	}
	et_daemon_prime_one(k);
	return k;
}

static void learn(int fd, const char *path)
{
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return;
	}
	(void)et_daemon_learn_st(fd, path, &st);
}

/* The files process pid maps executable, each opened through map_files. */
void et_daemon_learn_maps(pid_t pid)
{
	char p[64];
	snprintf(p, sizeof p, "/proc/%ld/maps", (long)pid);
	FILE *f = fopen(p, "re");
	if (!f)
		return;   /* it ended meanwhile */
	char line[PATH_MAX + 128];
	while (fgets(line, sizeof line, f)) {
		unsigned long lo, hi, ino;
		unsigned maj, min;
		char perms[8];
		int at = 0;
		if (sscanf(line, "%lx-%lx %7s %*x %x:%x %lu %n", &lo, &hi, perms, &maj, &min, &ino, &at) < 6 ||
		    perms[2] != 'x' || !ino || !at || line[at] != '/')
			continue;
		char *path = line + at;
		path[strcspn(path, "\n")] = '\0';
		if (strstr(path, " (deleted)"))
			continue;
		char mf[96];
		snprintf(mf, sizeof mf, "/proc/%ld/map_files/%lx-%lx", (long)pid, lo, hi);
		int fd = open(mf, O_RDONLY | O_CLOEXEC);
		if (fd >= 0)
			learn(fd, path);
	}
	fclose(f);
}

/* ---- what it knows: STATE/known and STATE/daemon.json ----------------- */

/* STATE/known and STATE/daemon.json, each written whole (files.c): a
 * reader (status, the next start) never sees half of one. */
void et_daemon_write_state(bool last)
{
	/* figures alone (exec events, quiet programs): at most once a second
	 * (the main loop wakes for it), and when it stops */
	uint64_t now = et_daemon_now_ns();
	if (!et_dm.dirty && !(et_dm.counted && (last || now - et_dm.written_ns >= FIGURES_NS)))
		return;
	et_dm.dirty = false;
	et_dm.counted = false;
	et_dm.written_ns = now;
	char dst[PATH_MAX], *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		return;
	for (size_t i = 0; i < et_dm.nfiles; i++)
		if (et_dm.files[i].host && (et_dm.files[i].state == DF_PRIMED || et_dm.files[i].state == DF_PENDING))
			fprintf(f, "%s\n", et_dm.files[i].path);
	if (fclose(f) == 0) {
		snprintf(dst, sizeof dst, "%s/known", et_dm.state);
		(void)et_tool_write_atomic(dst, text ? text : "", len, 0644);
	}
	free(text);
	text = NULL;
	len = 0;
	f = open_memstream(&text, &len);
	if (!f)
		return;
	struct et_json j;
	et_json_init(&j, f);
	et_json_obj(&j, NULL);
	et_json_i64(&j, "pid", (int64_t)getpid());
	et_json_u64(&j, "pmd_size", et_dm.H);
	et_json_u64(&j, "recheck_ms", et_dm.recheck_ns / 1000000ull);
	et_json_u64(&j, "exec_events", et_dm.events);
	et_json_u64(&j, "quiet_programs", et_dm.nquiet);
	int cerr = 0, c = et_tool_collapse_file_text(&cerr);
	et_json_obj(&j, "collapse_file_text");
	if (c < 0)
		et_json_null(&j, "works");
	else
		et_json_bool(&j, "works", c == 1);
	if (c == 0)
		et_json_str(&j, "error", strerror(cerr));
	et_json_obj_end(&j);
	et_json_arr(&j, "files");
	for (size_t i = 0; i < et_dm.nfiles; i++) {
		const struct et_dfile *k = &et_dm.files[i];
		et_json_obj(&j, NULL);
		et_json_str(&j, "path", k->path);
		et_json_str(&j, "state", state_name[k->state]);
		if (k->why)
			et_json_str(&j, "why", k->why);
		et_json_u64(&j, "windows", k->windows);
		et_json_u64(&j, "huge", k->huge);
		et_json_u64(&j, "tries", k->tries);
		et_json_u64(&j, "primed_again", k->again);
		if (k->state == DF_PENDING && k->held_by[0])
			et_json_str(&j, "held_by", k->held_by);
		if (k->exe) {
			et_json_u64(&j, "exec_events", k->events);
			et_json_bool(&j, "quiet", k->quiet);
		}
		et_json_obj_end(&j);
	}
	et_json_arr_end(&j);
	et_json_obj_end(&j);
	et_json_end(&j);
	if (fclose(f) == 0) {
		snprintf(dst, sizeof dst, "%s/daemon.json", et_dm.state);
		(void)et_tool_write_atomic(dst, text, len, 0644);
	}
	free(text);
}

/* STATE/known: the files primed before, primed again now. */
void et_daemon_prime_known(void)
{
	char p[PATH_MAX];
	snprintf(p, sizeof p, "%s/known", et_dm.state);
	FILE *f = fopen(p, "re");
	if (!f)
		return;
	char line[PATH_MAX];
	while (fgets(line, sizeof line, f)) {
		line[strcspn(line, "\n")] = '\0';
		char at[PATH_MAX];
		if (line[0] != '/' || !here_path(line, at, sizeof at))
			continue;
		int fd = open(at, O_RDONLY | O_CLOEXEC);
		if (fd >= 0)
			learn(fd, line);
	}
	fclose(f);
}


void et_daemon_holder_ended(struct et_dfile *k, int fd)
{
	for (int j = 0; j < k->nhold; j++)
		if (k->hold[j] == fd) {
			close(fd);
			k->hold[j] = k->hold[--k->nhold];
			break;
		}
	if (!k->nhold) {
		et_dm.nholding--;
		uint64_t soon = k->primed_ns + RETRY_FIRST_NS, now = et_daemon_now_ns();
		k->next_ns = soon > now ? soon : now;
	}
}
