/*
 * tools/enormoustext/cmd/daemon.c — `enormoustext daemon`: huge text for every
 * program on the host with no code in any process, through the page cache.
 *
 * Once a file's text sits in the page cache as huge folios, the kernel maps
 * it huge by itself in every process whose mapping is congruent (address
 * and file offset equal modulo the PMD size): shared libraries of 2 MiB or
 * more, programs linked with enormous.ld, non-PIE and static programs (Go
 * programs among them), in containers too.  The daemon keeps it there:
 *
 *   1. it learns which programs run: fanotify FAN_OPEN_EXEC on every local
 *      filesystem (notification only: no permission event, so a program
 *      never waits for it; if the daemon dies or hangs, every program runs
 *      as plain); each event hands it the executable, open, whatever mount
 *      namespace the process runs in;
 *      every 5 s it also looks for processes it has not seen (a
 *      container whose root was mounted after it started, a program on a
 *      filesystem it does not watch, what ran before it started);
 *   2. --delay after an exec it reads /proc/PID/maps for the files the
 *      process maps executable (its shared libraries), each opened through
 *      /proc/PID/map_files (the very file the process maps, container or
 *      not);
 *   3. it primes each file (pagecache.c: drop the clean, unmapped small
 *      pages of a congruent window and read it back as one huge folio);
 *      a window whose small pages a process still maps is left alone and
 *      tried again later (1 s, 2 s, 4 s ... 64 s: at the latest when the
 *      last such process has ended); a file open for writing is left
 *      alone (pagecache.c);
 *   4. it remembers the host's files it primed (STATE/known) and primes
 *      them again when it starts (early at boot, or after the kernel
 *      evicted them), and writes what it knows to STATE/daemon.json.
 *
 * It runs at idle I/O priority and nice 10.  Network and FUSE filesystems
 * are not watched.
 *
 * Owns: `daemon`: its options, the watch, the table of files it knows.
 * May call: pagecache.c (et_tool_prime_file), files.c (its state written
 * whole), core (sysinfo, options' duration parser, json), msg.c, common.c.
 * Never: blocks or slows a program (no permission events); changes a file;
 * drops a page a process maps or that is dirty (pagecache.c never does).
 */
#include "tool.h"
#include "host.h"
#include "opts.h"
#include "pagecache.h"

#include "core/options.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

enum { O_STATE = 1, O_DELAY, O_ONLY, O_ONCE, O_VERBOSE, O_HOST_ROOT };

static const struct et_opt options[] = {
	{ "state", 's', "DIR", "where it keeps what it learnt (default /var/lib/enormoustext)", O_STATE, 0, 0, 0, NULL,
	  ET_COMP_DIR },
	{ "delay", 'd', "DURATION", "how long after a program starts its maps are read (default 1s)", O_DELAY, 0, 0, 0,
	  NULL, 0 },
	{ "only", 0, "DIR", "learn only files under DIR (again for more); its filesystem is still watched", O_ONLY, 0, 0,
	  0, NULL, ET_COMP_DIR },
	{ "host-root", 0, "DIR",
	  "the host's / is mounted at DIR (a container with the host's PID namespace): the host's paths are found there",
	  O_HOST_ROOT, 0, 0, 0, NULL, ET_COMP_DIR },
	{ "once", 'o', NULL, "prime the files STATE/known names, then exit (no watch)", O_ONCE, 0, 0, 0, NULL, 0 },
	{ "verbose", 'v', NULL, "one line on stderr per file learnt, primed or given up", O_VERBOSE, 0, 0, 0, NULL, 0 },
	{ NULL, 0, NULL, NULL, 0, 0, 0, 0, NULL, 0 },
};

static const struct et_cmd_spec spec = {
	.name = "daemon",
	.forms = { { NULL, NULL } },
	.about = "Keep the text of the programs that run on this host in the page cache as\n"
	         "huge folios, so that the kernel maps it huge by itself in every process\n"
	         "whose mapping is congruent: no library, no code in any process, static\n"
	         "programs and containers included.  Runs in the foreground until SIGTERM or\n"
	         "SIGINT (the package's enormoustext.service runs it).  Needs root\n"
	         "(fanotify on the host's filesystems).\n",
	.sections = { { NULL, options, NULL } },
	.tail = "It learns programs from their exec (fanotify FAN_OPEN_EXEC, notification\n"
	        "only: no program ever waits for it), their shared libraries from\n"
	        "/proc/PID/maps, and primes each file as `enormoustext prime` does once no\n"
	        "process maps its small pages.  STATE/known lists the host's files it\n"
	        "primed (primed again when it starts); STATE/daemon.json says what it knows.\n"
	        "In a container (a DaemonSet: the host's PID namespace, the host's / at\n"
	        "DIR), --host-root DIR: the paths a host's process names (its maps, its\n"
	        "exec) are looked up and STATE/known's are opened under DIR.\n"
	        "\n"
	        "Exit status: 0 stopped by a signal (or --once done); 1 it could not watch\n"
	        "(not root, no fanotify, STATE not writable); 2 usage error.\n",
	.operand = ET_COMP_NONE,
};

const struct et_cmd_spec *et_cmd_daemon_spec(void)
{
	return &spec;
}

static volatile sig_atomic_t g_stop;

static void on_signal(int sig)
{
	(void)sig;
	g_stop = 1;
}

static uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* ---- watching: fanotify on every local filesystem --------------------- */

static bool local_fs(const char *type)
{
	static const char *const ok[] = { "ext2", "ext3", "ext4", "xfs", "btrfs", "tmpfs", "f2fs", "overlay",
		                           "squashfs", "erofs", "vfat", "jfs", "reiserfs", "bcachefs", NULL };
	for (int i = 0; ok[i]; i++)
		if (!strcmp(type, ok[i]))
			return true;
	return false;
}

/* One mark per filesystem (FAN_MARK_FILESYSTEM) on each local one mounted
 * in this mount namespace: how many, or -1 with a message. */
static int watch_filesystems(int fan, int *nfs)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	if (!f) {
		et_tool_err("/proc/self/mountinfo: %s", strerror(errno));
		return -1;
	}
	dev_t seen[256];
	int nseen = 0, err = 0;
	char line[4096];
	*nfs = 0;
	while (fgets(line, sizeof line, f)) {
		char mp[PATH_MAX], type[64];
		unsigned maj, min;
		/* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [OPTIONAL...] - TYPE SOURCE SUPER */
		if (sscanf(line, "%*s %*s %u:%u %*s %4095s", &maj, &min, mp) != 3)
			continue;
		char *dash = strstr(line, " - ");
		if (!dash || sscanf(dash + 3, "%63s", type) != 1 || !local_fs(type))
			continue;
		dev_t d = makedev(maj, min);
		bool dup = false;
		for (int i = 0; i < nseen; i++)
			dup |= seen[i] == d;
		if (dup || nseen == (int)(sizeof seen / sizeof *seen))
			continue;
		if (fanotify_mark(fan, FAN_MARK_ADD | FAN_MARK_FILESYSTEM, FAN_OPEN_EXEC, AT_FDCWD, mp) != 0) {
			if (!err)
				err = errno;
			continue;
		}
		seen[nseen++] = d;
		(*nfs)++;
	}
	fclose(f);
	if (!*nfs) {
		et_tool_err("no filesystem could be watched (fanotify_mark: %s)", strerror(err ? err : ENOENT));
		return -1;
	}
	return 0;
}

/* ---- the files it knows ----------------------------------------------- */

enum file_state { F_PENDING, F_PRIMED, F_NOT_CONGRUENT, F_GAVE_UP };
static const char *const state_name[] = { "pending", "primed", "nothing to prime", "gave up" };

struct known {
	dev_t dev;
	ino_t ino;
	int fd;                 /* open while pending: primed through /proc/self/fd/N */
	char *path;             /* as a process named it (its mount namespace), malloc'd */
	bool host;              /* path names this very file here too: kept in STATE/known */
	enum file_state state;
	unsigned tries;
	uint64_t next_ns;
	uint64_t windows, huge, held;
};

static struct known *g_files;
static size_t g_nfiles, g_capfiles;

struct proc {
	pid_t pid;
	uint64_t due_ns;
};
static struct proc *g_procs;
static size_t g_nprocs, g_capprocs;

static const char *g_state = ET_TOOL_DAEMON_STATE;
/* --host-root: where the host's / is mounted ("": this is the host's /) */
static const char *g_host_root = "";
static const char *g_only[16];
static int g_nonly;
static bool g_verbose;
static uint64_t g_H;
static bool g_dirty;

#define RETRY_FIRST_NS 1000000000ull
#define ET_DAEMON_FILES 50000
#define RETRY_TRIES 8u

static struct known *find(dev_t dev, ino_t ino)
{
	for (size_t i = 0; i < g_nfiles; i++)
		if (g_files[i].dev == dev && g_files[i].ino == ino)
			return &g_files[i];
	return NULL;
}

/* Prime k once (through its open descriptor), and decide what next. */
static void prime_one(struct known *k)
{
	char via[64];
	snprintf(via, sizeof via, "/proc/self/fd/%d", k->fd);
	struct et_tool_primed r;
	memset(&r, 0, sizeof r);
	k->tries++;
	g_dirty = true;
	if (et_tool_prime_file(via, g_H, false, &r) != 0) {
		k->state = F_GAVE_UP;
	} else if (!r.congruent || r.windows == 0) {
		/* no whole window, or none at an address congruent with its
		 * offset (a PIE executable with 4 KiB p_align): the page
		 * cache cannot make it huge; the library's copies can */
		k->state = F_NOT_CONGRUENT;
		k->windows = r.windows;
	} else {
		k->windows = r.windows;
		k->huge = r.n[ET_WIN_HUGE_BEFORE] + r.n[ET_WIN_PRIMED];
		k->held = r.n[ET_WIN_HELD];
		/* no room for a huge page now (memory in small pieces) passes:
		 * tried again like a window held by a process */
		bool done = k->huge == k->windows ||
		            ((r.n[ET_WIN_NO_FOLIOS] || r.n[ET_WIN_WRITING]) && !r.n[ET_WIN_NO_ROOM]);
		k->state = done ? F_PRIMED : k->tries >= RETRY_TRIES ? F_GAVE_UP : F_PENDING;
	}
	if (k->state == F_PENDING) {
		k->next_ns = now_ns() + (RETRY_FIRST_NS << (k->tries - 1));
		return;
	}
	if (g_verbose && k->state == F_NOT_CONGRUENT)
		et_tool_err("%s: nothing to prime (%s)", k->path,
		            r.windows ? "its windows are not congruent with their load address" : "no whole huge-page window");
	else if (g_verbose)
		et_tool_err("%s: %s (%llu of %llu windows huge in the page cache)", k->path, state_name[k->state],
		            (unsigned long long)k->huge, (unsigned long long)k->windows);
	close(k->fd);
	k->fd = -1;
}

/* Is path one --only lets it learn? */
static bool wanted(const char *path)
{
	if (!g_nonly)
		return true;
	for (int i = 0; i < g_nonly; i++) {
		size_t n = strlen(g_only[i]);
		while (n > 1 && g_only[i][n - 1] == '/')
			n--;
		if (!strncmp(path, g_only[i], n) && (path[n] == '/' || path[n] == '\0'))
			return true;
	}
	return false;
}

/* path as the host names it (a host process's maps and exec events give
 * the host's paths, whatever root this daemon runs in), here: under
 * --host-root; false when that does not fit */
static bool here_path(const char *path, char *buf, size_t size)
{
	int n = snprintf(buf, size, "%s%s", g_host_root, path);
	return n > 0 && (size_t)n < size;
}

/* A file a process maps executable (fd: open on it, taken over). */
static void learn(int fd, const char *path)
{
	struct stat st;
	if (!wanted(path)) {
		close(fd);
		return;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return;
	}
	struct known *k = find(st.st_dev, st.st_ino);
	if (k) {
		close(fd);
		return;
	}
	/* memory bounded: at most ET_DAEMON_FILES files (a few MiB), then
	 * nothing new is learnt (said once) */
	char *copy = g_nfiles < ET_DAEMON_FILES ? strdup(path) : NULL;
	struct known *t = copy ? et_tool_grow(g_files, &g_capfiles, g_nfiles + 1, sizeof *g_files) : NULL;
	if (!t) {
		static bool said;
		if (!said && g_nfiles >= ET_DAEMON_FILES)
			et_tool_err("%d files known: no more are learnt", ET_DAEMON_FILES);
		said |= g_nfiles >= ET_DAEMON_FILES;
		free(copy);
		close(fd);
		return;
	}
	g_files = t;
	k = &g_files[g_nfiles++];
	memset(k, 0, sizeof *k);
	k->dev = st.st_dev;
	k->ino = st.st_ino;
	k->fd = fd;
	k->path = copy;
	struct stat here;
	char at[PATH_MAX];
	k->host = path[0] == '/' && here_path(path, at, sizeof at) && stat(at, &here) == 0 &&
	          here.st_dev == st.st_dev && here.st_ino == st.st_ino;
	k->state = F_PENDING;
	if (g_verbose)
		et_tool_err("learnt %s", path);
	prime_one(k);
}

/* The files process pid maps executable, each opened through map_files. */
static void learn_maps(pid_t pid)
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
static void write_state(void)
{
	if (!g_dirty)
		return;
	g_dirty = false;
	char dst[PATH_MAX], *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		return;
	for (size_t i = 0; i < g_nfiles; i++)
		if (g_files[i].host && (g_files[i].state == F_PRIMED || g_files[i].state == F_PENDING))
			fprintf(f, "%s\n", g_files[i].path);
	if (fclose(f) == 0) {
		snprintf(dst, sizeof dst, "%s/known", g_state);
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
	et_json_u64(&j, "pmd_size", g_H);
	et_json_arr(&j, "files");
	for (size_t i = 0; i < g_nfiles; i++) {
		const struct known *k = &g_files[i];
		et_json_obj(&j, NULL);
		et_json_str(&j, "path", k->path);
		et_json_str(&j, "state", state_name[k->state]);
		et_json_u64(&j, "windows", k->windows);
		et_json_u64(&j, "huge", k->huge);
		et_json_u64(&j, "tries", k->tries);
		et_json_obj_end(&j);
	}
	et_json_arr_end(&j);
	et_json_obj_end(&j);
	et_json_end(&j);
	if (fclose(f) == 0) {
		snprintf(dst, sizeof dst, "%s/daemon.json", g_state);
		(void)et_tool_write_atomic(dst, text, len, 0644);
	}
	free(text);
}

/* STATE/known: the files primed before, primed again now. */
static void prime_known(void)
{
	char p[PATH_MAX];
	snprintf(p, sizeof p, "%s/known", g_state);
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

/* ---- the loop ---------------------------------------------------------- */

static void queue_proc(pid_t pid, uint64_t delay_ns)
{
	struct proc *t = et_tool_grow(g_procs, &g_capprocs, g_nprocs + 1, sizeof *g_procs);
	if (!t)
		return;
	g_procs = t;
	g_procs[g_nprocs++] = (struct proc){ pid, now_ns() + delay_ns };
}

/* Every process, every SCAN_NS: the ones it has not seen yet are learnt
 * as an exec event's would be (a process whose executable's filesystem is
 * not watched: a container's root mounted after the daemon started, a
 * network filesystem; the processes that ran before it started). */
#define SCAN_NS (5ull * 1000000000ull)
/* Events are read at most this often (the main loop). */
#define BATCH_NS 250000000L
static pid_t *g_seen, *g_seen_next;
static size_t g_nseen, g_capseen, g_nseen_next, g_capseen_next;

static bool seen_before(pid_t pid)
{
	size_t lo = 0, hi = g_nseen;   /* g_seen is sorted (readdir order is not: sorted below) */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (g_seen[mid] == pid)
			return true;
		if (g_seen[mid] < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;
	return x < y ? -1 : x > y;
}

static void scan_procs(uint64_t delay_ns)
{
	DIR *d = opendir("/proc");
	if (!d)
		return;
	g_nseen_next = 0;
	pid_t self = getpid();
	for (struct dirent *e; (e = readdir(d));) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);
		if (*end || pid <= 0 || pid == self)
			continue;
		pid_t *t = et_tool_grow(g_seen_next, &g_capseen_next, g_nseen_next + 1, sizeof *g_seen_next);
		if (!t)
			break;
		g_seen_next = t;
		g_seen_next[g_nseen_next++] = (pid_t)pid;
		if (!seen_before((pid_t)pid))
			queue_proc((pid_t)pid, delay_ns);
	}
	closedir(d);
	qsort(g_seen_next, g_nseen_next, sizeof *g_seen_next, cmp_pid);
	pid_t *t = g_seen;
	size_t c = g_capseen;
	g_seen = g_seen_next;
	g_capseen = g_capseen_next;
	g_nseen = g_nseen_next;
	g_seen_next = t;
	g_capseen_next = c;
}

static void read_events(int fan, uint64_t delay_ns)
{
	char buf[8192] __attribute__((aligned(__alignof__(struct fanotify_event_metadata))));
	for (;;) {
		ssize_t n = read(fan, buf, sizeof buf);
		if (n <= 0)
			return;
		struct fanotify_event_metadata *m = (struct fanotify_event_metadata *)buf;
		for (; FAN_EVENT_OK(m, n); m = FAN_EVENT_NEXT(m, n)) {
			if (m->vers != FANOTIFY_METADATA_VERSION || m->fd < 0)
				continue;
			if (m->pid == getpid()) {
				close(m->fd);
				continue;
			}
			char link[64], path[PATH_MAX];
			snprintf(link, sizeof link, "/proc/self/fd/%d", m->fd);
			ssize_t l = readlink(link, path, sizeof path - 1);
			path[l > 0 ? l : 0] = '\0';
			learn(m->fd, l > 0 ? path : "?");
			queue_proc(m->pid, delay_ns);
		}
	}
}

/* The processes whose delay passed, the pending files whose retry is due:
 * done now; the time of the next (0: none). */
static uint64_t run_due(void)
{
	uint64_t now = now_ns(), next = 0;
	size_t keep = 0;
	for (size_t i = 0; i < g_nprocs; i++) {
		if (g_procs[i].due_ns <= now) {
			learn_maps(g_procs[i].pid);
			continue;
		}
		next = !next || g_procs[i].due_ns < next ? g_procs[i].due_ns : next;
		g_procs[keep++] = g_procs[i];
	}
	g_nprocs = keep;
	for (size_t i = 0; i < g_nfiles; i++) {
		struct known *k = &g_files[i];
		if (k->state != F_PENDING)
			continue;
		if (k->next_ns <= now)
			prime_one(k);
		if (k->state == F_PENDING)
			next = !next || k->next_ns < next ? k->next_ns : next;
	}
	return next;
}

static void lower_priority(void)
{
	/* ioprio_set(IOPRIO_WHO_PROCESS, 0, IOPRIO_CLASS_IDLE << 13) */
	(void)syscall(SYS_ioprio_set, 1, 0, 3 << 13);
	(void)setpriority(PRIO_PROCESS, 0, 10);
	/* a file waiting for its holders to end is kept open: as many as
	 * the hard limit allows (systemd's: 524288) */
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static int parse(int argc, char **argv, uint64_t *delay_ns, bool *once)
{
	struct et_args a;
	et_args_init(&a, &spec, argc, argv);
	int c;
	while ((c = et_args_next(&a)) > 0) {
		switch (c) {
		case O_STATE: g_state = a.val; break;
		case O_DELAY:
			if (et_parse_duration(a.val, delay_ns) != 0)
				return et_tool_usage("--delay: '%s' is not a duration (e.g. 500ms, 1s)", a.val);
			break;
		case O_ONLY:
			if (g_nonly == (int)(sizeof g_only / sizeof *g_only))
				return et_tool_usage("--only: at most %d directories", g_nonly);
			if (a.val[0] != '/')
				return et_tool_usage("--only: '%s' is not an absolute path", a.val);
			g_only[g_nonly++] = a.val;
			break;
		case O_HOST_ROOT:
			if (a.val[0] != '/')
				return et_tool_usage("--host-root: '%s' is not an absolute path", a.val);
			g_host_root = a.val;
			break;
		case O_ONCE: *once = true; break;
		case O_VERBOSE: g_verbose = true; break;
		}
	}
	if (c < 0)
		return et_args_exit(c);
	if (a.nops)
		return et_tool_usage("daemon takes no operand ('%s')", a.ops[0]);
	/* "/" and "/host/" name the same as "" and "/host" */
	static char root[PATH_MAX];
	size_t n = strlen(g_host_root);
	while (n > 0 && g_host_root[n - 1] == '/')
		n--;
	if (n >= sizeof root)
		return et_tool_usage("--host-root: too long");
	memcpy(root, g_host_root, n);
	root[n] = '\0';
	g_host_root = root;
	return -1;
}

int et_cmd_daemon(int argc, char **argv)
{
	uint64_t delay_ns = 1000000000ull;
	bool once = false;
	int rc = parse(argc, argv, &delay_ns, &once);
	if (rc >= 0)
		return rc;
	struct stat hr;
	if (g_host_root[0]) {
		int e = stat(g_host_root, &hr) != 0 ? errno : S_ISDIR(hr.st_mode) ? 0 : ENOTDIR;
		if (e) {
			et_tool_err("--host-root %s: %s", g_host_root, strerror(e));
			return ET_EXIT_BAD;
		}
	}
	if (mkdir(g_state, 0755) != 0 && errno != EEXIST) {
		et_tool_err("%s: %s", g_state, strerror(errno));
		return ET_EXIT_BAD;
	}
	struct et_sysinfo si;
	et_sysinfo_read_pmd(&si, "/");
	g_H = si.pmd_size;
	lower_priority();
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	int fan = -1, nfs = 0;
	if (!once) {
		fan = fanotify_init(FAN_CLASS_NOTIF | FAN_CLOEXEC | FAN_NONBLOCK, O_RDONLY | O_LARGEFILE | O_CLOEXEC);
		if (fan < 0) {
			et_tool_err("fanotify_init: %s%s", strerror(errno),
			            errno == EPERM ? " (it needs root: CAP_SYS_ADMIN)" : "");
			return ET_EXIT_BAD;
		}
		if (watch_filesystems(fan, &nfs) != 0)
			return ET_EXIT_BAD;
		et_tool_err("watching %d filesystem%s; state in %s%s%s", nfs, et_tool_plural((uint64_t)nfs, "s"),
		            g_state, g_host_root[0] ? "; the host's / at " : "", g_host_root);
	}
	g_dirty = true;
	prime_known();
	write_state();
	uint64_t next_scan = 0;
	while (!once && !g_stop) {
		if (now_ns() >= next_scan) {
			/* the first scan: what runs already, learnt at once */
			scan_procs(next_scan ? delay_ns : 0);
			next_scan = now_ns() + SCAN_NS;
		}
		uint64_t next = run_due();
		write_state();
		int timeout = 1000;
		if (next) {
			uint64_t now = now_ns();
			uint64_t ms = next > now ? (next - now) / 1000000ull + 1 : 0;
			timeout = ms < 1000 ? (int)ms : 1000;
		}
		struct pollfd p = { fan, POLLIN, 0 };
		if (poll(&p, 1, timeout) > 0) {
			read_events(fan, delay_ns);
			/* the next events read together, a quarter second on: a
			 * storm of short programs wakes the daemon four times a
			 * second, not once per exec (the kernel queues them; what
			 * it drops on overflow the scan of /proc finds) */
			struct timespec batch = { 0, BATCH_NS };
			nanosleep(&batch, NULL);
		}
	}
	if (fan >= 0)
		close(fan);
	write_state();
	return ET_EXIT_OK;
}
