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
 *      a program it knows and has settled is not reported again for
 *      --recheck (an ignore mark on its inode, flushed every --recheck,
 *      removed by the kernel when the file is written): a storm of short
 *      programs costs it, and their exec, next to nothing;
 *   2. --delay after an exec it reads /proc/PID/maps for the files the
 *      process maps executable (its shared libraries), each opened through
 *      /proc/PID/map_files (the very file the process maps, container or
 *      not); once per --recheck per program;
 *   3. it primes each file (pagecache.c: drop the clean, unmapped small
 *      pages of a congruent window and read it back as one huge folio;
 *      where the kernel collapses file text in place, MADV_COLLAPSE,
 *      probed by the first window);
 *      a window whose small pages a process still maps is left alone and
 *      tried again later (1 s, 2 s, 4 s ... 64 s: at the latest when the
 *      last such process has ended); a file open for writing is left
 *      alone (pagecache.c); a primed file seen in use --recheck or more
 *      after it was primed is checked, and what the kernel evicted or
 *      split is primed again;
 *   4. it remembers the host's files it primed (STATE/known) and primes
 *      them again when it starts (early at boot, or after the kernel
 *      evicted them), and writes what it knows to STATE/daemon.json.
 *
 * It runs at idle I/O priority and nice 10.  Files on network and FUSE
 * filesystems are left alone (a prime would read them again through the
 * network or a user-space server) unless --network-fs or --fuse asks.
 *
 * Owns: `daemon`: its options, the watch (fanotify, the scan of /proc,
 * the holders' pidfds), the main loop.  The table of files it knows is
 * daemon_files.c's (daemon.h).
 * May call: daemon_files.c, core (sysinfo, options' duration parser),
 * msg.c, common.c.
 * Never: blocks or slows a program (no permission events); changes a file;
 * drops a page a process maps or that is dirty (pagecache.c never does).
 */
#include "daemon.h"
#include "host.h"
#include "opts.h"

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

enum { O_STATE = 1, O_DELAY, O_RECHECK, O_ONLY, O_FUSE, O_NETWORK_FS, O_ONCE, O_VERBOSE, O_HOST_ROOT };

static const struct et_opt options[] = {
	{ "state", 's', "DIR", "where it keeps what it learnt (default /var/lib/enormoustext)", O_STATE, 0, 0, 0, NULL,
	  ET_COMP_DIR },
	{ "delay", 'd', "DURATION", "how long after a program starts its maps are read (default 1s)", O_DELAY, 0, 0, 0,
	  NULL, 0 },
	{ "recheck", 'r', "DURATION",
	  "how long what it learnt of a file stands (default 60s): a primed file in use later is checked and primed "
	  "again; a program started again within it costs nothing",
	  O_RECHECK, 0, 0, 0, NULL, 0 },
	{ "only", 0, "DIR", "learn only files under DIR (again for more); its filesystem is still watched", O_ONLY, 0, 0,
	  0, NULL, ET_COMP_DIR },
	{ "fuse", 0, NULL,
	  "watch and prime files on FUSE filesystems too (left alone by default: a user-space server reads them)",
	  O_FUSE, 0, 0, 0, NULL, 0 },
	{ "network-fs", 0, NULL,
	  "watch and prime files on network and cluster filesystems too (NFS, SMB, 9p, Ceph...: left alone by "
	  "default, a prime reads each window again over the network)",
	  O_NETWORK_FS, 0, 0, 0, NULL, 0 },
	{ "host-root", 0, "DIR",
	  "the host's / is mounted at DIR (a container with the host's PID namespace): the host's paths are found there",
	  O_HOST_ROOT, 0, 0, 0, NULL, ET_COMP_DIR },
	{ "once", 'o', NULL, "prime the files STATE/known names, then exit (no watch)", O_ONCE, 0, 0, 0, NULL, 0 },
	{ "verbose", 'v', NULL, "one line on stderr per filesystem watched and per file learnt, primed or given up", O_VERBOSE, 0, 0, 0, NULL, 0 },
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
	        "process maps its small pages.  A primed file in use again --recheck later\n"
	        "is checked and primed again (the kernel evicted or split its folios); a\n"
	        "program started again within --recheck is not reported to it at all.\n"
	        "STATE/known lists the host's files it\n"
	        "primed (primed again when it starts); STATE/daemon.json says what it knows.\n"
	        "In a container (a DaemonSet: the host's PID namespace, the host's / at\n"
	        "DIR), --host-root DIR: the paths a host's process names (its maps, its\n"
	        "exec) are looked up and STATE/known's are opened under DIR.  Files on\n"
	        "FUSE and network filesystems are left alone unless --fuse or --network-fs.\n"
	        "\n"
	        "Exit status: 0 stopped by a signal (or --once done); 1 it could not watch\n"
	        "(not root, no fanotify, STATE not writable); 2 usage error.\n",
	.operand = ET_COMP_NONE,
};

const struct et_cmd_spec *et_cmd_daemon_spec(void)
{
	return &spec;
}

struct proc {
	pid_t pid;
	uint64_t due_ns;
};
static struct proc *g_procs;
static size_t g_nprocs, g_capprocs;

static volatile sig_atomic_t g_stop;

static void on_signal(int sig)
{
	(void)sig;
	g_stop = 1;
}

/* ---- watching: fanotify on every local filesystem (and FUSE, network
 * ones when asked: et_daemon_fs_watched) ------------------------------ */

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
		if (!dash || sscanf(dash + 3, "%63s", type) != 1 || !et_daemon_fs_watched(type))
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
		if (et_dm.verbose)
			et_tool_err("watching %s (%s)", mp, type);
	}
	fclose(f);
	if (!*nfs) {
		et_tool_err("no filesystem could be watched (fanotify_mark: %s)", strerror(err ? err : ENOENT));
		return -1;
	}
	return 0;
}

/* ---- the loop ---------------------------------------------------------- */

static void queue_proc(pid_t pid, uint64_t delay_ns)
{
	struct proc *t = et_tool_grow(g_procs, &g_capprocs, g_nprocs + 1, sizeof *g_procs);
	if (!t)
		return;
	g_procs = t;
	g_procs[g_nprocs++] = (struct proc){ pid, et_daemon_now_ns() + delay_ns };
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

/* A program's exec (fd: open on it, taken over).  A program it knows
 * costs a lookup: its maps are read once per --recheck, and once it is
 * settled its exec is not reported again until the next flush (an ignore
 * mark on its inode, removed by the kernel if the file is written): a
 * storm of short programs it knows wakes it for nothing. */
static void exec_event(int fd, pid_t pid, uint64_t delay_ns)
{
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return;
	}
	et_dm.events++;
	et_dm.counted = true;
	uint64_t now = et_daemon_now_ns();
	struct et_dfile *k = et_daemon_find(st.st_dev, st.st_ino);
	if (!k) {
		char link[64], path[PATH_MAX];
		snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
		ssize_t l = readlink(link, path, sizeof path - 1);
		path[l > 0 ? l : 0] = '\0';
		k = et_daemon_learn_st(fd, l > 0 ? path : "?", &st);
		if (k) {
			k->exe = true;
			k->maps_ns = now;
			k->events++;
		}
		/* its libraries may be wanted even where it is not */
		queue_proc(pid, delay_ns);
		return;
	}
	k->exe = true;
	k->events++;
	if (!k->maps_ns || now - k->maps_ns >= et_dm.recheck_ns) {
		k->maps_ns = now;
		queue_proc(pid, delay_ns);
	}
	if (k->state != DF_PENDING && !k->quiet &&
	    fanotify_mark(et_dm.fan, FAN_MARK_ADD | FAN_MARK_IGNORED_MASK, FAN_OPEN_EXEC, fd, NULL) == 0) {
		k->quiet = true;
		et_dm.nquiet++;
	}
	et_daemon_recheck(k, fd);
}

/* The ignore marks removed (every --recheck): each program's next exec
 * is reported again, and its files checked. */
static void flush_quiet(void)
{
	if (!et_dm.nquiet)
		return;
	if (fanotify_mark(et_dm.fan, FAN_MARK_FLUSH, 0, AT_FDCWD, "/") != 0)
		return;
	for (size_t i = 0; i < et_dm.nfiles; i++)
		et_dm.files[i].quiet = false;
	et_dm.nquiet = 0;
	et_dm.counted = true;
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
			if (m->pid == et_dm.self)
				close(m->fd);
			else
				exec_event(m->fd, m->pid, delay_ns);
		}
	}
}

/* The processes whose delay passed, the pending files whose retry is due:
 * done now; the time of the next (0: none). */
static uint64_t run_due(void)
{
	uint64_t now = et_daemon_now_ns(), next = 0;
	size_t keep = 0;
	for (size_t i = 0; i < g_nprocs; i++) {
		if (g_procs[i].due_ns <= now) {
			et_daemon_learn_maps(g_procs[i].pid);
			continue;
		}
		next = !next || g_procs[i].due_ns < next ? g_procs[i].due_ns : next;
		g_procs[keep++] = g_procs[i];
	}
	g_nprocs = keep;
	for (size_t i = 0; i < et_dm.nfiles; i++) {
		struct et_dfile *k = &et_dm.files[i];
		if (k->state != DF_PENDING)
			continue;
		if (k->next_ns <= now)
			et_daemon_prime_one(k);
		if (k->state == DF_PENDING)
			next = !next || k->next_ns < next ? k->next_ns : next;
	}
	return next;
}

/* What the main loop polls: the fanotify group, then the pidfds of the
 * processes that hold pending files' windows (g_pfk: whose).  How many
 * (0: no memory for them). */
static struct pollfd *g_pfd;
static struct et_dfile **g_pfk;
static size_t g_cappfd, g_cappfk;

static size_t poll_set(int fan)
{
	size_t n = 1;
	for (size_t i = 0; et_dm.nholding && i < et_dm.nfiles; i++)
		n += (size_t)et_dm.files[i].nhold;
	struct pollfd *p = et_tool_grow(g_pfd, &g_cappfd, n, sizeof *g_pfd);
	if (p)
		g_pfd = p;
	struct et_dfile **q = p ? et_tool_grow(g_pfk, &g_cappfk, n, sizeof *g_pfk) : NULL;
	if (q)
		g_pfk = q;
	if (!p || !q)
		return 0;
	g_pfd[0] = (struct pollfd){ fan, POLLIN, 0 };
	n = 1;
	for (size_t i = 0; et_dm.nholding && i < et_dm.nfiles; i++)
		for (int j = 0; j < et_dm.files[i].nhold; j++) {
			g_pfk[n] = &et_dm.files[i];
			g_pfd[n++] = (struct pollfd){ et_dm.files[i].hold[j], POLLIN, 0 };
		}
	return n;
}

/* Holders that ended (their pidfd readable): forgotten; a file whose last
 * holder ended is tried again now, or a second after its last try. */
static void holders_ended(size_t n)
{
	for (size_t i = 1; i < n; i++)
		if (g_pfd[i].revents)
			et_daemon_holder_ended(g_pfk[i], g_pfd[i].fd);
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
		case O_STATE: et_dm.state = a.val; break;
		case O_DELAY:
			if (et_parse_duration(a.val, delay_ns) != 0)
				return et_tool_usage("--delay: '%s' is not a duration (e.g. 500ms, 1s)", a.val);
			break;
		case O_RECHECK:
			if (et_parse_duration(a.val, &et_dm.recheck_ns) != 0 || et_dm.recheck_ns < 1000000000ull)
				return et_tool_usage("--recheck: '%s' is not a duration of 1s or more (e.g. 30s, 5m)", a.val);
			break;
		case O_ONLY:
			if (et_dm.nonly == (int)(sizeof et_dm.only / sizeof *et_dm.only))
				return et_tool_usage("--only: at most %d directories", et_dm.nonly);
			if (a.val[0] != '/')
				return et_tool_usage("--only: '%s' is not an absolute path", a.val);
			et_dm.only[et_dm.nonly++] = a.val;
			break;
		case O_HOST_ROOT:
			if (a.val[0] != '/')
				return et_tool_usage("--host-root: '%s' is not an absolute path", a.val);
			et_dm.host_root = a.val;
			break;
		case O_FUSE: et_dm.fuse = true; break;
		case O_NETWORK_FS: et_dm.network_fs = true; break;
		case O_ONCE: *once = true; break;
		case O_VERBOSE: et_dm.verbose = true; break;
		}
	}
	if (c < 0)
		return et_args_exit(c);
	if (a.nops)
		return et_tool_usage("daemon takes no operand ('%s')", a.ops[0]);
	/* "/" and "/host/" name the same as "" and "/host" */
	static char root[PATH_MAX];
	size_t n = strlen(et_dm.host_root);
	while (n > 0 && et_dm.host_root[n - 1] == '/')
		n--;
	if (n >= sizeof root)
		return et_tool_usage("--host-root: too long");
	memcpy(root, et_dm.host_root, n);
	root[n] = '\0';
	et_dm.host_root = root;
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
	if (et_dm.host_root[0]) {
		int e = stat(et_dm.host_root, &hr) != 0 ? errno : S_ISDIR(hr.st_mode) ? 0 : ENOTDIR;
		if (e) {
			et_tool_err("--host-root %s: %s", et_dm.host_root, strerror(e));
			return ET_EXIT_BAD;
		}
	}
	if (mkdir(et_dm.state, 0755) != 0 && errno != EEXIST) {
		et_tool_err("%s: %s", et_dm.state, strerror(errno));
		return ET_EXIT_BAD;
	}
	struct et_sysinfo si;
	et_sysinfo_read_pmd(&si, "/");
	et_dm.H = si.pmd_size;
	et_dm.self = getpid();
	lower_priority();
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	int fan = -1, nfs = 0;
	if (!once) {
		fan = fanotify_init(FAN_CLASS_NOTIF | FAN_CLOEXEC | FAN_NONBLOCK, O_RDONLY | O_LARGEFILE | O_CLOEXEC);
		et_dm.fan = fan;
		if (fan < 0) {
			et_tool_err("fanotify_init: %s%s", strerror(errno),
			            errno == EPERM ? " (it needs root: CAP_SYS_ADMIN)" : "");
			return ET_EXIT_BAD;
		}
		if (watch_filesystems(fan, &nfs) != 0)
			return ET_EXIT_BAD;
		et_tool_err("watching %d filesystem%s; state in %s%s%s", nfs, et_tool_plural((uint64_t)nfs, "s"),
		            et_dm.state, et_dm.host_root[0] ? "; the host's / at " : "", et_dm.host_root);
	}
	et_dm.dirty = true;
	et_daemon_prime_known();
	et_daemon_write_state(false);
	uint64_t next_scan = 0, next_flush = et_daemon_now_ns() + et_dm.recheck_ns;
	while (!once && !g_stop) {
		if (et_daemon_now_ns() >= next_scan) {
			/* the first scan: what runs already, learnt at once */
			scan_procs(next_scan ? delay_ns : 0);
			next_scan = et_daemon_now_ns() + SCAN_NS;
		}
		if (et_daemon_now_ns() >= next_flush) {
			flush_quiet();
			next_flush = et_daemon_now_ns() + et_dm.recheck_ns;
		}
		uint64_t next = run_due();
		et_daemon_write_state(false);
		int timeout = 1000;
		if (et_dm.counted && (!next || et_dm.written_ns + FIGURES_NS < next))
			next = et_dm.written_ns + FIGURES_NS;
		if (next) {
			uint64_t now = et_daemon_now_ns();
			uint64_t ms = next > now ? (next - now) / 1000000ull + 1 : 0;
			timeout = ms < 1000 ? (int)ms : 1000;
		}
		size_t n = poll_set(fan);
		if (n && poll(g_pfd, (nfds_t)n, timeout) > 0) {
			holders_ended(n);
			if (!(g_pfd[0].revents & POLLIN))
				continue;
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
	et_daemon_write_state(true);
	return ET_EXIT_OK;
}
