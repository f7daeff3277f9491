/*
 * tools/enormoustext/record.c — `enormoustext record -o FILE -- COMMAND...`:
 * where a program spends its time, window by window, as a profile for
 * ENORMOUSTEXT_PROFILE.
 *
 * The program counter of every thread of COMMAND (and of its children) is
 * sampled with perf_event_open's software cpu-clock event — no hardware PMU
 * needed — one inherited event per CPU, enabled at exec.  MMAP2 records say
 * which file each executable mapping holds (with its build-id, Linux 5.12+);
 * each sample is attributed to (build-id, address in the object's own ELF
 * address space) through the object's program headers, and counted per
 * 64-byte granule.  When COMMAND exits, the profile is written by
 * core/profile.c's writer, by outfile.c's rules (a file beside FILE,
 * renamed into place; a device or FIFO as it is).  Samples in anonymous
 * memory (JIT code, text moved by the library as copies) belong to no file
 * and are counted as such.
 *
 * Owns: `record`: sampling COMMAND with perf events (or, where they are
 * refused, running it with the library's own recorder, ENORMOUSTEXT_RECORD,
 * and merging its processes' profiles), `--from-perf-script`'s options
 * (the attribution of samples to (build-id, granule) is attrib.c's).
 * May call: core (profile: its writer, the recording's granule and rate;
 * util), os/perf_attr.h (the cpu-clock event the library uses too),
 * attrib.c (samples to objects), import.c (`perf script` text),
 * profiles.c (the merge), preload.c (the library to preload), output.c,
 * msg.c, common.c.
 * Never: writes a profile line itself (core/profile.c's writer does);
 * runs another process to merge.
 */
#include "attrib.h"
#include "import.h"
#include "preload.h"
#include "profiles.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <poll.h>

#include "os/perf_attr.h"
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define GRANULE ET_PROFILE_RECORD_GRANULE
#define RING_PAGES 64            /* data pages per CPU (a power of two) */

static void help(FILE *f)
{
	fprintf(f,
	        "usage: enormoustext record -o FILE [--frequency HZ] [--] COMMAND [ARGS...]\n"
	        "       enormoustext record -o FILE --from-perf-script TEXT\n"
	        "\n"
	        "Run COMMAND, sample where its threads (and its children's) execute, and write\n"
	        "a profile for ENORMOUSTEXT_PROFILE: per object (by build-id), samples per\n"
	        "%u bytes of its text.  Uses perf_event_open's cpu-clock event (no hardware PMU\n"
	        "needed; kernel.perf_event_paranoid <= 2 for a user's own programs).  Run\n"
	        "COMMAND without the library's anonymous copies (ENORMOUSTEXT_BACKEND=file, or\n"
	        "without the library): samples in anonymous memory belong to no file.\n"
	        "Where perf_event_open is refused, COMMAND runs with the library preloaded\n"
	        "instead, each of its processes sampling itself with a CPU-time timer and\n"
	        "SIGPROF (ENORMOUSTEXT_RECORD: up to %d Hz a thread, bounded by the kernel's\n"
	        "tick, -F not applied; ENORMOUSTEXT=0 unless set), and the profiles its\n"
	        "processes write at exit are merged into FILE; a static program cannot be\n"
	        "recorded so, nor a process killed by a signal.\n"
	        "\n"
	        "  -o, --output FILE     the profile to write (required)\n"
	        "  -F, --frequency HZ    samples per second per thread (default %d)\n"
	        "      --from-perf-script TEXT\n"
	        "                        instead of running a COMMAND, read the output of\n"
	        "                        `perf script -F pid,ip --show-mmap-events` (- for stdin)\n"
	        "                        of an existing `perf record`\n"
	        "  -h, --help            this help\n"
	        "\n"
	        "Exit status: COMMAND's; 1 when sampling cannot start or FILE cannot be\n"
	        "written; 2 usage error.\n",
	        ET_PROFILE_RECORD_GRANULE, ET_PROFILE_RECORD_HZ, ET_PROFILE_RECORD_HZ);
}

/* ---- the ring buffers ------------------------------------------------- */

struct ring {
	int fd;
	struct perf_event_mmap_page *meta;
	char *data;
	uint64_t size;
};

static void drain(struct ring *r)
{
	uint64_t head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = r->meta->data_tail;
	char rec[8192];
	while (tail < head) {
		struct perf_event_header h;
		for (size_t i = 0; i < sizeof h; i++)
			((char *)&h)[i] = r->data[(tail + i) & (r->size - 1)];
		if (h.size < sizeof h || h.size > sizeof rec)
			break;
		for (size_t i = 0; i < h.size; i++)
			rec[i] = r->data[(tail + i) & (r->size - 1)];
		tail += h.size;
		const char *b = rec + sizeof h;
		if (h.type == PERF_RECORD_SAMPLE && h.size >= sizeof h + 16) {
			uint64_t ip;
			uint32_t pid;
			memcpy(&ip, b, 8);
			memcpy(&pid, b + 8, 4);
			et_attr_sample(pid, ip, 1);
		} else if (h.type == PERF_RECORD_MMAP2 && h.size >= sizeof h + 64) {
			uint32_t pid, prot;
			uint64_t addr, len, pgoff;
			memcpy(&pid, b, 4);
			memcpy(&addr, b + 8, 8);
			memcpy(&len, b + 16, 8);
			memcpy(&pgoff, b + 24, 8);
			memcpy(&prot, b + 56, 4);
			char bid[41] = "";
			if (h.misc & PERF_RECORD_MISC_MMAP_BUILD_ID)
				et_hex_build_id((const uint8_t *)b + 36, (uint8_t)b[32], bid);
			const char *name = b + 64;
			size_t max = h.size - sizeof h - 64;
			if (memchr(name, '\0', max) && (prot & PROT_EXEC))
				et_attr_map(pid, addr, len, pgoff, name, bid[0] ? bid : NULL);
		}
	}
	__atomic_store_n(&r->meta->data_tail, tail, __ATOMIC_RELEASE);
}

static long perf_open(struct perf_event_attr *a, pid_t pid, int cpu)
{
	return syscall(SYS_perf_event_open, a, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

/* ---- where perf_event_open is refused: the library's own timer ---------- */

/* Whether this process may open a cpu-clock event at all: 0, or the errno
 * that refuses it (checked before COMMAND starts). */
static int perf_refused(void)
{
	struct perf_event_attr a;
	et_cpu_clock_attr(&a, ET_PROFILE_RECORD_HZ);
	a.disabled = 1;
	long fd = perf_open(&a, 0, -1);
	if (fd >= 0) {
		close((int)fd);
		return 0;
	}
	int e = errno;
	return e == EACCES || e == EPERM || e == ENOSYS || e == EOPNOTSUPP ? e : 0;
}

/* The output opened before COMMAND ran, dropped: what is at its path stays
 * as it was (t may be NULL, or not open: a FIFO that had no reader). */
static void out_drop(struct et_tool_out *t)
{
	if (t && t->f)
		et_tool_out_abort(t);
	free(t);
}

/* In the child, after execvp failed: say why, tell the parent (through the
 * close-on-exec pipe fd: nothing is written there), exit 127 or 126 as a
 * shell does. */
static void exec_failed(const char *cmd, int fd) __attribute__((noreturn));
static void exec_failed(const char *cmd, int fd)
{
	int e = errno;
	fprintf(stderr, "enormoustext record: %s: %s\n", cmd, strerror(e));
	ssize_t w = write(fd, &e, sizeof e);
	(void)w;                /* the exit status says it too */
	_exit(e == ENOENT ? 127 : 126);
}

/* A profile a process wrote (not one it was still writing: NAME.tmp). */
static bool is_profile(const char *path)
{
	size_t l = strlen(path);
	return l > 5 && !strcmp(path + l - 5, ".prof");
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Run COMMAND with the library preloaded, recording itself
 * (ENORMOUSTEXT_RECORD: a CPU-time timer and SIGPROF where perf_event_open
 * is refused) and moving nothing (ENORMOUSTEXT=0, unless set); each process
 * that runs the library writes its own profile into a private directory,
 * and the profiles are merged into out. */
static int record_with_library(char **cmd, const char *out, int why, struct et_tool_out *t)
{
	char *preload = et_tool_preload(NULL);
	if (!preload) {
		et_tool_err("perf_event_open: %s, and the library's own sampling needs the library: "
		            "nothing recorded", strerror(why));
		out_drop(t);
		return ET_EXIT_BAD;
	}
	/* (a % in the directory would be the library's to expand) */
	const char *tmp = getenv("TMPDIR");
	if (!tmp || !*tmp || strchr(tmp, '%') || strlen(tmp) > 900)
		tmp = "/tmp";
	char dir[PATH_MAX];
	snprintf(dir, sizeof dir, "%s/enormoustext-record.XXXXXX", tmp);
	if (!mkdtemp(dir)) {
		et_tool_err("%s: %s", dir, strerror(errno));
		free(preload);
		out_drop(t);
		return ET_EXIT_BAD;
	}
	char rec[PATH_MAX + 16];
	snprintf(rec, sizeof rec, "%s/%%p.prof", dir);
	fprintf(stderr, "enormoustext record: perf_event_open: %s: sampling with the library's "
	        "CPU-time timers (ENORMOUSTEXT_RECORD) instead, up to %d Hz a thread\n", strerror(why),
	        ET_PROFILE_RECORD_HZ);
	fflush(stderr);
	/* our own signals go to the command; its status is ours */
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	int ex[2] = { -1, -1 };
	pid_t child = pipe2(ex, O_CLOEXEC) == 0 ? fork() : -1;
	if (child < 0) {
		et_tool_err("%s: %s", ex[0] < 0 ? "pipe" : "fork", strerror(errno));
		if (ex[0] >= 0) {
			close(ex[0]);
			close(ex[1]);
		}
		free(preload);
		rmdir(dir);
		out_drop(t);
		return ET_EXIT_BAD;
	}
	if (child == 0) {
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		close(ex[0]);
		if (setenv("LD_PRELOAD", preload, 1) != 0 || setenv("ENORMOUSTEXT_RECORD", rec, 1) != 0 ||
		    setenv("ENORMOUSTEXT", "0", 0) != 0)
			_exit(126);
		execvp(cmd[0], cmd);
		exec_failed(cmd[0], ex[1]);
	}
	close(ex[1]);
	free(preload);
	int st = 0;
	while (waitpid(child, &st, 0) < 0 && errno == EINTR)
		;
	int exec_err = 0;
	if (read(ex[0], &exec_err, sizeof exec_err) != (ssize_t)sizeof exec_err)
		exec_err = 0;
	close(ex[0]);
	/* the profiles the processes wrote */
	char **profs = NULL;
	size_t nf = 0;
	DIR *d = opendir(dir);
	for (struct dirent *e; d && (e = readdir(d));) {
		size_t l = strlen(e->d_name);
		if (e->d_name[0] == '.')
			continue;
		char *path = malloc(strlen(dir) + l + 2);
		char **more = realloc(profs, (nf + 1) * sizeof *profs);
		if (!path || !more) {
			et_tool_err("out of memory");
			exit(ET_EXIT_BAD);
		}
		profs = more;
		sprintf(path, "%s/%s", dir, e->d_name);
		profs[nf++] = path;
	}
	if (d)
		closedir(d);
	int rc = 0;
	size_t ok = 0;
	for (size_t i = 0; i < nf; i++)
		ok += is_profile(profs[i]);
	int cmd_rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	bool keep = false;             /* the processes' profiles, when the merge fails */
	if (ok == 0) {
		/* the library writes at exit(): a process killed by a signal, or one
		 * that leaves through _exit, writes nothing */
		if (WIFSIGNALED(st))
			et_tool_err("%s was killed by signal %d before it could write its profile "
			            "(the library writes at exit): nothing recorded", cmd[0], WTERMSIG(st));
		else if (exec_err)
			;              /* it said why: nothing to add */
		else
			et_tool_err("no process of %s wrote a profile (a static program cannot load the "
			            "library; one that leaves through _exit writes nothing): nothing recorded",
			            cmd[0]);
		rc = cmd_rc ? cmd_rc : ET_EXIT_BAD;
		out_drop(t);
		t = NULL;
	} else {
		/* `enormoustext profile merge -o OUT FILES...`'s work */
		qsort(profs, nf, sizeof *profs, by_name);
		char **list = calloc(nf ? nf : 1, sizeof *list);
		if (!list) {
			et_tool_err("out of memory");
			exit(ET_EXIT_BAD);
		}
		size_t k = 0;
		for (size_t i = 0; i < nf; i++)
			if (is_profile(profs[i]))
				list[k++] = profs[i];
		int m = et_tool_profile_merge_to(t && t->f ? t : NULL, out, list, k);
		free(t);
		t = NULL;
		if (m != ET_EXIT_OK) {
			rc = ET_EXIT_BAD;   /* the merge said why */
			keep = true;
			et_tool_err("the profiles of %s's processes are left in %s", cmd[0], dir);
		}
		free(list);
		if (!rc)
			fprintf(stderr, "enormoustext record: %zu process profile%s merged into %s\n", ok,
			        et_tool_s(ok), out);
	}
	for (size_t i = 0; i < nf; i++) {
		if (!keep)
			unlink(profs[i]);
		free(profs[i]);
	}
	free(profs);
	if (!keep)
		rmdir(dir);
	if (rc)
		return rc;
	return cmd_rc;
}

int et_cmd_record(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "frequency", required_argument, NULL, 'F' },
		{ "from-perf-script", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *out = NULL, *from = NULL;
	uint64_t hz = ET_PROFILE_RECORD_HZ;
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:o:F:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case 'F':
			if (et_tool_parse_u64(optarg, &hz) != 0 || hz < 1 || hz > 100000)
				return et_tool_usage("--frequency takes 1 to 100000, not '%s'", optarg);
			break;
		case 'p': from = optarg; break;
		case 'h': help(stdout); return ET_EXIT_OK;
		default: return et_tool_bad_option(c, argv, optind);
		}
	}
	if (!out)
		return et_tool_usage("give the profile to write: -o FILE");
	if (from) {
		if (optind < argc)
			return et_tool_usage("--from-perf-script takes no COMMAND");
		et_attr_init(false);
		return et_tool_import_perf_script(from, out);
	}
	if (optind >= argc)
		return et_tool_usage("give the COMMAND to run");
	et_attr_init(true);
	/* FILE is opened before COMMAND runs: one that cannot be written is
	 * refused without running it (a FIFO with no reader yet: at the end) */
	struct et_tool_out *t = malloc(sizeof *t);
	if (!t) {
		et_tool_err("out of memory");
		return ET_EXIT_BAD;
	}
	if (!et_tool_out_try(t, out) && !t->o.skipped) {
		free(t);
		return ET_EXIT_BAD;
	}
	int why = perf_refused();
	if (why)
		return record_with_library(argv + optind, out, why, t);
	/* the child waits for the events before it execs; if exec fails, it
	 * says so through ex (close-on-exec: nothing comes when it ran) */
	int go[2], ex[2];
	if (pipe2(go, O_CLOEXEC) != 0 || pipe2(ex, O_CLOEXEC) != 0) {
		et_tool_err("pipe: %s", strerror(errno));
		out_drop(t);
		return ET_EXIT_BAD;
	}
	pid_t child = fork();
	if (child < 0) {
		et_tool_err("fork: %s", strerror(errno));
		out_drop(t);
		return ET_EXIT_BAD;
	}
	if (child == 0) {
		char x;
		close(go[1]);
		close(ex[0]);
		if (read(go[0], &x, 1) != 1)
			_exit(127);
		execvp(argv[optind], argv + optind);
		exec_failed(argv[optind], ex[1]);
	}
	close(go[0]);
	close(ex[1]);
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	if (ncpu < 1)
		ncpu = 1;
	struct ring *rings = calloc((size_t)ncpu, sizeof *rings);
	long pg = sysconf(_SC_PAGESIZE);
	int nr = 0;
	for (long cpu = 0; cpu < ncpu && rings; cpu++) {
		struct perf_event_attr a;
		et_cpu_clock_attr(&a, hz);
		a.disabled = 1;
		a.enable_on_exec = 1;
		a.mmap = 1;               /* needed with mmap2 for task-bound events to get records */
		a.mmap2 = 1;
		a.build_id = 1;
		long fd = perf_open(&a, child, (int)cpu);
		if (fd < 0 && errno == EINVAL) {
			a.build_id = 0;       /* before Linux 5.12: the build-id from the file */
			fd = perf_open(&a, child, (int)cpu);
		}
		if (fd < 0) {
			if (errno == ENODEV || errno == ENOENT)
				continue;         /* an offline CPU */
			et_tool_err("perf_event_open (cpu-clock, cpu %ld): %s%s", cpu, strerror(errno),
			            errno == EACCES || errno == EPERM ?
			            " (kernel.perf_event_paranoid too high for this user?)" : "");
			kill(child, SIGKILL);
			waitpid(child, NULL, 0);
			free(rings);
			out_drop(t);
			return ET_EXIT_BAD;
		}
		size_t len = (size_t)(RING_PAGES + 1) * (size_t)pg;
		void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, (int)fd, 0);
		if (m == MAP_FAILED) {
			et_tool_err("mmap of the sample buffer: %s", strerror(errno));
			kill(child, SIGKILL);
			waitpid(child, NULL, 0);
			free(rings);
			out_drop(t);
			return ET_EXIT_BAD;
		}
		rings[nr++] = (struct ring){ (int)fd, m, (char *)m + pg, (uint64_t)RING_PAGES * (uint64_t)pg };
	}
	if (!rings || write(go[1], "g", 1) != 1) {
		et_tool_err("cannot start %s", argv[optind]);
		free(rings);
		out_drop(t);
		return ET_EXIT_BAD;
	}
	close(go[1]);
	/* our own signals go to the child; its status is ours */
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	int st = 0;
	for (;;) {
		struct pollfd pfd[64];
		int np = nr < 64 ? nr : 64;
		for (int i = 0; i < np; i++)
			pfd[i] = (struct pollfd){ rings[i].fd, POLLIN, 0 };
		poll(pfd, (nfds_t)np, 50);
		for (int i = 0; i < nr; i++)
			drain(&rings[i]);
		pid_t w = waitpid(child, &st, WNOHANG);
		if (w == child)
			break;
	}
	for (int i = 0; i < nr; i++) {
		drain(&rings[i]);
		munmap(rings[i].meta, (size_t)(RING_PAGES + 1) * (size_t)pg);
		close(rings[i].fd);
	}
	free(rings);
	/* COMMAND never ran (exec failed, it said why): nothing to write, what
	 * is at out stays as it was */
	int exec_err = 0;
	if (read(ex[0], &exec_err, sizeof exec_err) != (ssize_t)sizeof exec_err)
		exec_err = 0;
	close(ex[0]);
	char sum[160], comment[200];
	et_attr_summary(sum, sizeof sum);
	snprintf(comment, sizeof comment, "recorded by enormoustext record: %s", sum);
	int rc = exec_err ? 0 : et_attr_write(t, out, comment) == 0 ? 0 : ET_EXIT_BAD;
	if (exec_err)
		out_drop(t);
	if (rc == 0 && !exec_err) {
		et_attr_say_unfound();
		fprintf(stderr, "enormoustext record: %s written to %s\n", sum, out);
	}
	if (rc)
		return rc;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
