/*
 * tools/enormoustext/cmd/record.c — `enormoustext record -o FILE -- COMMAND...`:
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
 * The command as parse -> act -> print: parse, then one of three routes
 * (COMMAND under perf events, --pid, --from-perf-script; where perf events
 * are refused, COMMAND under the library's own recorder: record_library.c),
 * then --json's report.
 *
 * Owns: `record`: its options, sampling COMMAND or a running process with
 * perf events, the choice of the library's recorder where they are refused
 * (record_library.c runs it), `--from-perf-script`'s options (the
 * attribution of samples to (build-id, granule) is attrib.c's), and
 * --json's report of what was recorded (never with the profile on stdout).
 * May call: core (profile: its writer, the recording's granule and rate;
 * util), os/perf_attr.h (the cpu-clock event the library uses too),
 * attrib.c (samples to objects), import.c (`perf script` text),
 * record_library.c, profiles.c, output.c,
 * progress.c (with --pid, the line on a terminal: time, samples, threads;
 * not while COMMAND runs, whose own output shares the terminal), msg.c,
 * common.c.
 * Never: writes a profile line itself (core/profile.c's writer does);
 * runs another process to merge.
 */
#include "attrib.h"
#include "record.h"
#include "opts.h"
#include "import.h"
#include "profiles.h"
#include "progress.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
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
#include <time.h>
#include <unistd.h>

#define GRANULE ET_PROFILE_RECORD_GRANULE
#define RING_PAGES 64            /* data pages per CPU (a power of two) */

enum { O_OUTPUT = 1, O_FREQUENCY, O_PID, O_DURATION, O_FROM_PERF_SCRIPT, O_JSON };

static const struct et_opt options[] = {
	{ "output", 'o', "FILE", "the profile to write (required)", O_OUTPUT, ET_OPTF_REQUIRED | ET_OPTF_SHORT, 0,
	  0, NULL, ET_COMP_FILE },
	{ "frequency", 'F', "HZ", "samples per second per thread",
	  O_FREQUENCY, ET_OPTF_SHORT, 0, 1 | 2, NULL, ET_COMP_NONE },
	{ "pid", 'p', "PID",
	  "instead of running a COMMAND, sample the running\n"
	  "process PID (each of its threads; as `perf record -p`)\n"
	  "until it exits, SIGINT, or --duration is over",
	  O_PID, ET_OPTF_REQUIRED | ET_OPTF_SHORT, 1, 2, NULL, ET_COMP_PID },
	{ "duration", 0, "SECONDS", "with --pid: stop after SECONDS", O_DURATION, 0, 0, 2, NULL, ET_COMP_NONE },
	{ "from-perf-script", 0, "TEXT",
	  "instead of running a COMMAND, read the output of\n"
	  "`perf script -F pid,ip --show-mmap-events` (- for\n"
	  "stdin) of an existing `perf record`",
	  O_FROM_PERF_SCRIPT, ET_OPTF_REQUIRED, 1, 4, NULL, ET_COMP_FILE },
	{ "json", 0, NULL,
	  "JSON on stdout, once FILE is written, of what was\n"
	  "recorded: output, source (perf events, the library's\n"
	  "timers, perf script), command or pid, frequency,\n"
	  "duration_ms, threads, processes, samples, outside,\n"
	  "left_out, objects, exit_status (COMMAND's stdout\n"
	  "comes before it: redirect it); not when FILE is\n"
	  "standard output",
	  O_JSON, 0, 0, 0, NULL, 0 },
	{ NULL, 0, NULL, NULL, 0, 0, 0, 0, NULL, 0 },
};

static void about(FILE *f)
{
	fprintf(f,
	        "Run COMMAND (or watch process PID), sample where its threads (and its\n"
	        "children's) execute, and write a profile for ENORMOUSTEXT_PROFILE: per object\n"
	        "(by build-id), samples per %u bytes of its text.  Uses perf_event_open's\n"
	        "cpu-clock event (no hardware PMU needed; kernel.perf_event_paranoid <= 2 for\n"
	        "a user's own programs; --pid needs ptrace access to the process too).  Run\n"
	        "COMMAND without the library's anonymous copies (ENORMOUSTEXT_BACKEND=file, or\n"
	        "without the library): samples in anonymous memory belong to no file.\n"
	        "Where perf_event_open is refused, COMMAND runs with the library preloaded\n"
	        "instead, each of its processes sampling itself with a CPU-time timer and\n"
	        "SIGPROF (ENORMOUSTEXT_RECORD: up to %d Hz a thread, bounded by the kernel's\n"
	        "tick, -F not applied; ENORMOUSTEXT=0 unless set), and the profiles its\n"
	        "processes write at exit are merged into FILE; a static program cannot be\n"
	        "recorded so, nor a process killed by a signal, nor a running one (--pid).\n",
	        ET_PROFILE_RECORD_GRANULE, ET_PROFILE_RECORD_HZ);
}

static const char *dflt(int id, char *buf, size_t cap)
{
	if (id != O_FREQUENCY)
		return NULL;
	snprintf(buf, cap, "%d", ET_PROFILE_RECORD_HZ);
	return buf;
}

static const struct et_cmd_spec spec = {
	.name = "record",
	.dflt = dflt,
	.forms = { { NULL, "[--] COMMAND [ARGS...]" }, { NULL, NULL }, { NULL, NULL } },
	.about_fn = about,
	.sections = { { NULL, options, NULL } },
	.tail = "Exit status: COMMAND's; 1 when sampling cannot start or FILE cannot be\n"
	        "written; 2 usage error (--json with FILE standard output, where the JSON\n"
	        "would go).  With --pid: 0 written.\n",
	.operand = ET_COMP_COMMAND,
	.in_order = true,
};

const struct et_cmd_spec *et_cmd_record_spec(void)
{
	return &spec;
}

/* ---- --json: what was recorded ------------------------------------------ */

static struct {
	bool json;
	const char *source;        /* "perf events", "library timers", "perf script" */
	uint32_t *tids;            /* the threads that were sampled: an open-addressed set */
	size_t ntids, cap;
	size_t processes;          /* the library's timers: the profiles merged */
	struct et_tool_merge_stats merged;
	bool have_merged;
	struct timespec t0;
} R;

/* A thread seen in a sample (tid 0 is never one: the slot is free). */
static void saw_tid(uint32_t tid)
{
	if (!R.json || !tid)
		return;
	if (2 * (R.ntids + 1) > R.cap) {
		size_t cap = R.cap ? 2 * R.cap : 256;
		uint32_t *t = calloc(cap, sizeof *t);
		if (!t)
			return;
		for (size_t i = 0; i < R.cap; i++) {
			if (!R.tids[i])
				continue;
			size_t k = (R.tids[i] * 2654435761u) & (cap - 1);
			while (t[k])
				k = (k + 1) & (cap - 1);
			t[k] = R.tids[i];
		}
		free(R.tids);
		R.tids = t;
		R.cap = cap;
	}
	size_t k = (tid * 2654435761u) & (R.cap - 1);
	while (R.tids[k] && R.tids[k] != tid)
		k = (k + 1) & (R.cap - 1);
	if (!R.tids[k]) {
		R.tids[k] = tid;
		R.ntids++;
	}
}

/* The report, after FILE was written: figures from attrib.c's totals (or
 * the merge's, for the library's timers). */
static void report_json(const char *out, char **cmd, long pid, uint64_t hz, int exit_status)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	int64_t ms = (int64_t)(now.tv_sec - R.t0.tv_sec) * 1000 + (now.tv_nsec - R.t0.tv_nsec) / 1000000;
	struct et_attr_totals tot;
	et_attr_totals(&tot);
	bool lib = R.have_merged;
	struct et_json j;
	et_json_init(&j, stdout);
	et_json_obj(&j, NULL);
	et_json_str(&j, "output", out);
	et_json_str(&j, "source", R.source);
	et_json_arr(&j, "command");
	for (size_t i = 0; cmd && cmd[i]; i++)
		et_json_str(&j, NULL, cmd[i]);
	et_json_arr_end(&j);
	if (pid)
		et_json_i64(&j, "pid", pid);
	else
		et_json_null(&j, "pid");
	if (!strcmp(R.source, "perf script"))
		et_json_null(&j, "frequency");
	else
		et_json_u64(&j, "frequency", lib ? (uint64_t)ET_PROFILE_RECORD_HZ : hz);
	et_json_i64(&j, "duration_ms", ms < 0 ? 0 : ms);
	if (lib || !strcmp(R.source, "perf script"))
		et_json_null(&j, "threads");    /* not seen here: each process sampled itself */
	else
		et_json_u64(&j, "threads", R.ntids);
	if (lib)
		et_json_u64(&j, "processes", R.processes);
	else
		et_json_null(&j, "processes");
	et_json_u64(&j, "samples", lib ? R.merged.samples : tot.samples);
	if (lib) {
		et_json_null(&j, "outside");
		et_json_null(&j, "left_out");
	} else {
		et_json_u64(&j, "outside", tot.outside);
		et_json_u64(&j, "left_out", tot.unfound + tot.unplaced);
	}
	et_json_u64(&j, "objects", lib ? R.merged.objects : tot.objects);
	if (cmd)
		et_json_i64(&j, "exit_status", exit_status);
	else
		et_json_null(&j, "exit_status");
	et_json_obj_end(&j);
	et_json_end(&j);
	if (R.have_merged)
		et_tool_merge_stats_free(&R.merged);
	free(R.tids);
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
			uint32_t pid, tid;
			memcpy(&ip, b, 8);
			memcpy(&pid, b + 8, 4);
			memcpy(&tid, b + 12, 4);
			et_attr_sample(pid, ip, 1);
			saw_tid(tid);
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


/* ---- --pid: a process that runs already ---------------------------------- */

static volatile sig_atomic_t stop_pid;

static void on_stop_pid(int sig)
{
	(void)sig;
	stop_pid = 1;
}

/* Sample the threads of a running process (one event each, on any CPU;
 * threads it starts later are added as they appear) until it exits, a
 * SIGINT or SIGTERM, or `duration` seconds; the mappings it had before are
 * read from /proc/PID/maps (attrib.c's live mode), the later ones come as
 * MMAP2 records. */
static int record_pid(pid_t pid, const char *out, uint64_t hz, double duration)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
	if (kill(pid, 0) != 0 && errno == ESRCH) {
		et_tool_err("PID %d: no such process", (int)pid);
		return ET_EXIT_BAD;
	}
	struct et_tool_out *t = malloc(sizeof *t);
	if (!t) {
		et_tool_err("out of memory");
		return ET_EXIT_BAD;
	}
	if (!et_tool_out_try(t, out) && !t->o.skipped) {
		free(t);
		return ET_EXIT_BAD;
	}
	long pg = sysconf(_SC_PAGESIZE);
	size_t cap = 64, nr = 0;
	struct ring *rings = calloc(cap, sizeof *rings);
	pid_t *tids = calloc(cap, sizeof *tids);
	int rc = ET_EXIT_OK;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_stop_pid;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	struct timespec t0, now;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	bool first = true;
	struct et_progress line;
	et_progress_start(&line, "record");
	while (rings && tids && !stop_pid) {
		/* the threads, new ones added */
		DIR *d = opendir(path);
		if (!d) {
			if (first) {
				et_tool_err("PID %d: %s: %s", (int)pid, path, strerror(errno));
				rc = ET_EXIT_BAD;
			}
			break;
		}
		for (struct dirent *e; (e = readdir(d));) {
			long tid;
			if (et_tool_parse_pid(e->d_name, &tid) != 0)
				continue;
			bool known = false;
			for (size_t i = 0; i < nr && !known; i++)
				known = tids[i] == (pid_t)tid;
			if (known)
				continue;
			if (nr == cap) {
				struct ring *r2 = realloc(rings, 2 * cap * sizeof *rings);
				pid_t *t2 = r2 ? realloc(tids, 2 * cap * sizeof *tids) : NULL;
				if (r2)
					rings = r2;
				if (!t2)
					break;
				tids = t2;
				cap *= 2;
			}
			struct perf_event_attr at;
			et_cpu_clock_attr(&at, hz);
			at.inherit = 0;          /* a ring per thread; its later threads are found here */
			at.mmap = 1;
			at.mmap2 = 1;
			at.build_id = 1;
			long fd = perf_open(&at, (pid_t)tid, -1);
			if (fd < 0 && errno == EINVAL) {
				at.build_id = 0;
				fd = perf_open(&at, (pid_t)tid, -1);
			}
			if (fd < 0) {
				if (errno == ESRCH)
					continue;    /* the thread ended meanwhile */
				int e2 = errno;
				if (first) {
					et_tool_err("PID %d: perf_event_open: %s%s", (int)pid, strerror(e2),
					            e2 == EACCES || e2 == EPERM ?
					            " (sampling another process needs ptrace access to it: the same "
					            "user and kernel.perf_event_paranoid <= 2, or root)" : "");
					rc = ET_EXIT_BAD;
					break;
				}
				continue;
			}
			size_t len = (size_t)(RING_PAGES + 1) * (size_t)pg;
			void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, (int)fd, 0);
			if (m == MAP_FAILED) {
				close((int)fd);
				continue;
			}
			tids[nr] = (pid_t)tid;
			rings[nr++] = (struct ring){ (int)fd, m, (char *)m + pg, (uint64_t)RING_PAGES * (uint64_t)pg };
		}
		closedir(d);
		if (rc)
			break;
		if (first) {
			fprintf(stderr, "enormoustext record: sampling PID %d (%zu thread%s)%s\n", (int)pid, nr,
			        et_tool_s(nr), duration > 0 ? "" : " until it exits or ^C");
			fflush(stderr);
		}
		first = false;
		struct pollfd pfd[64];
		int np = nr < 64 ? (int)nr : 64;
		for (int i = 0; i < np; i++)
			pfd[i] = (struct pollfd){ rings[i].fd, POLLIN, 0 };
		poll(pfd, (nfds_t)np, 50);
		for (size_t i = 0; i < nr; i++)
			drain(&rings[i]);
		if (line.on) {
			struct et_attr_totals tot;
			et_attr_totals(&tot);
			char of[48] = "";
			if (duration > 0)
				snprintf(of, sizeof of, " of %g s", duration);
			et_progress_show(&line, false, "PID %d, %.1f s%s, %llu sample%s, %zu thread%s (^C ends it)", (int)pid,
			                 et_progress_elapsed(&line), of, (unsigned long long)tot.samples,
			                 et_tool_s(tot.samples), nr, et_tool_s(nr));
		}
		if (kill(pid, 0) != 0 && errno == ESRCH)
			break;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (duration > 0 && (double)(now.tv_sec - t0.tv_sec) + (double)(now.tv_nsec - t0.tv_nsec) / 1e9 >=
		                            duration)
			break;
	}
	et_progress_end(&line);
	for (size_t i = 0; rings && i < nr; i++) {
		drain(&rings[i]);
		munmap(rings[i].meta, (size_t)(RING_PAGES + 1) * (size_t)pg);
		close(rings[i].fd);
	}
	free(rings);
	free(tids);
	if (rc) {
		et_record_out_drop(t);
		return rc;
	}
	char sum[160], comment[220];
	et_attr_summary(sum, sizeof sum);
	snprintf(comment, sizeof comment, "recorded by enormoustext record --pid %d: %s", (int)pid, sum);
	if (et_attr_write(t, out, comment) != 0)
		return ET_EXIT_BAD;
	et_attr_say_unfound();
	fprintf(stderr, "enormoustext record: %s written to %s\n", sum, out);
	return ET_EXIT_OK;
}

/* What the command line asks. */
struct rargs {
	const char *out, *from;
	uint64_t hz;
	long pid;
	double duration;
};

/* The command line into ra and its COMMAND into *args.  false: stop with
 * *rc. */
static bool parse(int argc, char **argv, struct et_args *args, struct rargs *ra, int *rc)
{
	et_args_init(args, &spec, argc, argv);
	int c;
	*rc = ET_EXIT_OK;
	while (!*rc && (c = et_args_next(args)) > 0) {
		switch (c) {
		case O_OUTPUT: ra->out = args->val; break;
		case O_FREQUENCY:
			if (et_tool_parse_u64(args->val, &ra->hz) != 0 || ra->hz < 1 || ra->hz > 100000)
				*rc = et_tool_usage("--frequency takes 1 to 100000, not '%s'", args->val);
			break;
		case O_PID:
			if (et_tool_parse_pid(args->val, &ra->pid) != 0)
				*rc = et_tool_usage("--pid takes a process id, not '%s'", args->val);
			break;
		case O_DURATION: {
			char *end;
			ra->duration = strtod(args->val, &end);
			if (end == args->val || *end || !(ra->duration > 0) || !(ra->duration <= 86400))
				*rc = et_tool_usage("--duration takes a number of seconds above 0 (at most 86400), "
				                    "not '%s'", args->val);
			break;
		}
		case O_FROM_PERF_SCRIPT: ra->from = args->val; break;
		case O_JSON: R.json = true; break;
		}
	}
	if (*rc)
		return false;
	if (c < 0)
		*rc = et_args_exit(c);
	else if (!ra->out)
		*rc = et_tool_usage("give the profile to write: -o FILE");
	else if (ra->duration > 0 && !ra->pid)
		*rc = et_tool_usage("--duration goes with --pid");
	else if (ra->pid && et_tool_refuse_kthread("/proc", ra->pid))
		*rc = ET_EXIT_BAD;
	/* the JSON goes to stdout: the profile must not */
	else if (R.json && et_tool_out_is_stdout(ra->out))
		*rc = et_tool_usage("--json: -o %s is standard output, where the JSON goes: give another FILE",
		                    ra->out);
	else
		return true;
	return false;
}

/* COMMAND forked, waiting for a byte on go[0] before it execs; if exec
 * fails, it says so through ex (close-on-exec: nothing comes when it ran).
 * 0, or -1 after one line. */
static int spawn_waiting(char **cmd, int go[2], int ex[2], pid_t *child)
{
	if (pipe2(go, O_CLOEXEC) != 0 || pipe2(ex, O_CLOEXEC) != 0) {
		et_tool_err("pipe: %s", strerror(errno));
		return -1;
	}
	*child = fork();
	if (*child < 0) {
		et_tool_err("fork: %s", strerror(errno));
		return -1;
	}
	if (*child == 0) {
		char x;
		close(go[1]);
		close(ex[0]);
		if (read(go[0], &x, 1) != 1)
			_exit(127);
		execvp(cmd[0], cmd);
		et_record_exec_failed(cmd[0], ex[1]);
	}
	close(go[0]);
	close(ex[1]);
	return 0;
}

/* One inherited cpu-clock event per CPU on child, enabled at its exec,
 * each with its ring buffer mapped: *rp (NULL when out of memory), *nr of
 * them.  0, or -1 after one line, the child killed and the rings freed. */
static int open_rings(pid_t child, uint64_t hz, long pg, struct ring **rp, int *nr)
{
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	if (ncpu < 1)
		ncpu = 1;
	struct ring *rings = calloc((size_t)ncpu, sizeof *rings);
	*rp = rings;
	*nr = 0;
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
			goto fail;
		}
		size_t len = (size_t)(RING_PAGES + 1) * (size_t)pg;
		void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, (int)fd, 0);
		if (m == MAP_FAILED) {
			et_tool_err("mmap of the sample buffer: %s", strerror(errno));
			goto fail;
		}
		rings[(*nr)++] = (struct ring){ (int)fd, m, (char *)m + pg, (uint64_t)RING_PAGES * (uint64_t)pg };
	}
	return 0;
fail:
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	free(rings);
	*rp = NULL;
	return -1;
}

/* Drain the rings until child exits; its wait status.  The rings are
 * unmapped, closed and freed. */
static int sample_until_exit(struct ring *rings, int nr, pid_t child, long pg)
{
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
	return st;
}

/* Run COMMAND under perf events (or, where they are refused, under the
 * library's recorder), write the profile to out, say what was recorded:
 * COMMAND's exit status, or ET_EXIT_BAD. */
static int record_command(char **cmd, const char *out, uint64_t hz)
{
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
	if (why) {
		struct et_record_merged mg;
		memset(&mg, 0, sizeof mg);
		int rc = et_record_with_library(cmd, out, why, t, &mg);
		if (mg.ok) {
			R.merged = mg.stats;
			R.have_merged = true;
			R.processes = mg.processes;
			R.source = "library timers";
		}
		if (R.json && R.have_merged)
			report_json(out, cmd, 0, hz, rc);
		return rc;
	}
	int go[2], ex[2];
	pid_t child;
	if (spawn_waiting(cmd, go, ex, &child) != 0) {
		et_record_out_drop(t);
		return ET_EXIT_BAD;
	}
	long pg = sysconf(_SC_PAGESIZE);
	struct ring *rings;
	int nr;
	if (open_rings(child, hz, pg, &rings, &nr) != 0) {
		et_record_out_drop(t);
		return ET_EXIT_BAD;
	}
	if (!rings || write(go[1], "g", 1) != 1) {
		et_tool_err("cannot start %s", cmd[0]);
		free(rings);
		et_record_out_drop(t);
		return ET_EXIT_BAD;
	}
	close(go[1]);
	int st = sample_until_exit(rings, nr, child, pg);
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
		et_record_out_drop(t);
	int cmd_rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	if (rc == 0 && !exec_err) {
		et_attr_say_unfound();
		fprintf(stderr, "enormoustext record: %s written to %s\n", sum, out);
		if (R.json)
			report_json(out, cmd, 0, hz, cmd_rc);
	}
	if (rc)
		return rc;
	return cmd_rc;
}

int et_cmd_record(int argc, char **argv)
{
	struct rargs ra = { .hz = ET_PROFILE_RECORD_HZ };
	struct et_args args;
	int rc;
	if (!parse(argc, argv, &args, &ra, &rc))
		return rc;
	R.source = "perf events";
	clock_gettime(CLOCK_MONOTONIC, &R.t0);
	if (ra.from) {
		if (args.nops)
			return et_tool_usage("--from-perf-script takes no COMMAND");
		et_attr_init(false);
		rc = et_tool_import_perf_script(ra.from, ra.out);
		if (rc == ET_EXIT_OK && R.json) {
			R.source = "perf script";
			report_json(ra.out, NULL, 0, ra.hz, 0);
		}
		return rc;
	}
	if (ra.pid) {
		if (args.nops)
			return et_tool_usage("--pid takes no COMMAND ('%s')", args.ops[0]);
		et_attr_init(true);
		rc = record_pid((pid_t)ra.pid, ra.out, ra.hz, ra.duration);
		if (rc == ET_EXIT_OK && R.json)
			report_json(ra.out, NULL, ra.pid, ra.hz, 0);
		return rc;
	}
	if (!args.nops)
		return et_tool_usage("give the COMMAND to run");
	return record_command(args.ops, ra.out, ra.hz);
}
