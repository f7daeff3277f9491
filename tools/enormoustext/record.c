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
 * and merging its processes' profiles), `--from-perf-script`, and the
 * attribution of samples to (build-id, granule).
 * May call: core (profile: its writer, the recording's granule and rate;
 * util), os/perf_attr.h (the cpu-clock event the library uses too),
 * profile.c (the merge), run.c (the library to preload), output.c,
 * libelf.
 * Never: writes a profile line itself (core/profile.c's writer does);
 * runs another process to merge.
 */
#include "tool.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
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

/* ---- what the program maps --------------------------------------------- */

struct map {
	uint32_t pid;
	uint64_t addr, len, pgoff;
	int file;                    /* index into files[], -1 none */
};

struct loadseg {
	uint64_t off, filesz, vaddr;
};

struct file {
	char path[512];
	char build_id[41];
	struct loadseg segs[16];
	int nsegs;
	bool read;
};

struct count {
	int file;
	uint64_t granule;            /* vaddr / GRANULE */
	uint64_t n;
};

static struct map *maps;
static size_t nmaps, capmaps;
static struct file *files;
static size_t nfiles, capfiles;
static struct count *counts;
static size_t ncounts, capcounts;
static uint64_t samples_total, samples_unknown;

static void *grow(void *p, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return p;
	size_t n = *cap ? *cap * 2 : 64;
	while (n < need)
		n *= 2;
	void *q = realloc(p, n * elem);
	if (!q) {
		et_tool_err("out of memory");
		exit(ET_EXIT_BAD);
	}
	*cap = n;
	return q;
}


/* The object's PT_LOADs and build-id, from the file (once). */
static void read_file(struct file *f)
{
	f->read = true;
	int fd = open(f->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return;
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	size_t n = 0;
	if (e && elf_kind(e) == ELF_K_ELF && elf_getphdrnum(e, &n) == 0) {
		for (size_t i = 0; i < n; i++) {
			GElf_Phdr ph;
			if (!gelf_getphdr(e, (int)i, &ph))
				break;
			if (ph.p_type == PT_LOAD && f->nsegs < 16)
				f->segs[f->nsegs++] = (struct loadseg){ ph.p_offset, ph.p_filesz, ph.p_vaddr };
			if (ph.p_type == PT_NOTE && !f->build_id[0] && ph.p_filesz < (1u << 20)) {
				char *buf = malloc(ph.p_filesz);
				if (buf && pread(fd, buf, ph.p_filesz, (off_t)ph.p_offset) == (ssize_t)ph.p_filesz) {
					size_t o = 0;
					while (o + 12 <= ph.p_filesz) {
						uint32_t nsz, dsz, type;
						memcpy(&nsz, buf + o, 4);
						memcpy(&dsz, buf + o + 4, 4);
						memcpy(&type, buf + o + 8, 4);
						size_t name = o + 12, desc = name + ((nsz + 3) & ~3u);
						if (desc + dsz > ph.p_filesz)
							break;
						if (type == 3 && nsz == 4 && !memcmp(buf + name, "GNU", 4) && dsz <= 20)
							et_hex_build_id((const uint8_t *)buf + desc, dsz, f->build_id);
						o = desc + ((dsz + 3) & ~3u);
					}
				}
				free(buf);
			}
		}
	}
	if (e)
		elf_end(e);
	close(fd);
}

static int file_index(const char *path, const char *build_id)
{
	for (size_t i = 0; i < nfiles; i++)
		if (!strcmp(files[i].path, path))
			return (int)i;
	files = grow(files, &capfiles, nfiles + 1, sizeof *files);
	struct file *f = &files[nfiles];
	memset(f, 0, sizeof *f);
	et_strlcpy(f->path, path, sizeof f->path);
	if (build_id)
		snprintf(f->build_id, sizeof f->build_id, "%s", build_id);
	return (int)nfiles++;
}

static void add_map(uint32_t pid, uint64_t addr, uint64_t len, uint64_t pgoff, const char *path,
                    const char *build_id)
{
	/* a new mapping replaces what it covers (exec, dlopen after dlclose) */
	for (size_t i = 0; i < nmaps;) {
		struct map *m = &maps[i];
		if (m->pid == pid && m->addr < addr + len && addr < m->addr + m->len)
			maps[i] = maps[--nmaps];
		else
			i++;
	}
	maps = grow(maps, &capmaps, nmaps + 1, sizeof *maps);
	maps[nmaps++] = (struct map){ pid, addr, len, pgoff, path[0] == '/' ? file_index(path, build_id) : -1 };
}

/* counts by (file, granule): an open-addressing table of indexes into counts[] */
static uint32_t *slots;
static size_t nslots;

static size_t slot_of(int file, uint64_t g)
{
	uint64_t h = (g * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)(unsigned)file * 0xc2b2ae3d27d4eb4full);
	return (size_t)(h >> 20) & (nslots - 1);
}

static void add_count(int file, uint64_t g)
{
	if (ncounts * 2 >= nslots) {
		size_t n = nslots ? nslots * 2 : 4096;
		uint32_t *t = calloc(n, sizeof *t);
		if (!t) {
			et_tool_err("out of memory");
			exit(ET_EXIT_BAD);
		}
		free(slots);
		slots = t;
		nslots = n;
		for (size_t k = 0; k < ncounts; k++) {
			size_t i = slot_of(counts[k].file, counts[k].granule);
			while (slots[i])
				i = (i + 1) & (nslots - 1);
			slots[i] = (uint32_t)k + 1;
		}
	}
	size_t i = slot_of(file, g);
	while (slots[i]) {
		struct count *c = &counts[slots[i] - 1];
		if (c->file == file && c->granule == g) {
			c->n++;
			return;
		}
		i = (i + 1) & (nslots - 1);
	}
	counts = grow(counts, &capcounts, ncounts + 1, sizeof *counts);
	counts[ncounts] = (struct count){ file, g, 1 };
	slots[i] = (uint32_t)++ncounts;
}

/* Mappings made before the events were enabled (the program and its
 * interpreter, mapped by exec itself) have no MMAP2 record: for a sample
 * that no recorded mapping covers, read the process's maps, once per pid
 * (while it lives). */
static uint32_t maps_read_for[256];
static size_t nmaps_read;

static bool read_proc_maps(uint32_t pid)
{
	for (size_t i = 0; i < nmaps_read; i++)
		if (maps_read_for[i] == pid)
			return false;
	if (nmaps_read < sizeof maps_read_for / sizeof *maps_read_for)
		maps_read_for[nmaps_read++] = pid;
	char path[64], line[1024];
	snprintf(path, sizeof path, "/proc/%u/maps", pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	bool added = false;
	while (fgets(line, sizeof line, f)) {
		unsigned long long lo, hi, off;
		char perms[8];
		int n = 0;
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &lo, &hi, perms, &off, &n) < 4 || perms[2] != 'x' || !n)
			continue;
		char *name = line + n;
		name[strcspn(name, "\n")] = '\0';
		if (name[0] != '/')
			continue;
		bool known = false;
		for (size_t i = 0; i < nmaps && !known; i++)
			known = maps[i].pid == pid && maps[i].addr == lo;
		if (!known) {
			add_map(pid, lo, hi - lo, off, name, NULL);
			added = true;
		}
	}
	fclose(f);
	return added;
}

static void count_sample(uint32_t pid, uint64_t ip)
{
	samples_total++;
	bool again = true;
retry:
	for (size_t i = 0; i < nmaps; i++) {
		struct map *m = &maps[i];
		if (m->pid != pid || ip < m->addr || ip >= m->addr + m->len)
			continue;
		if (m->file < 0)
			break;
		struct file *f = &files[m->file];
		if (!f->read)
			read_file(f);
		uint64_t off = m->pgoff + (ip - m->addr);
		for (int s = 0; s < f->nsegs; s++) {
			if (off < f->segs[s].off || off >= f->segs[s].off + f->segs[s].filesz)
				continue;
			uint64_t g = (f->segs[s].vaddr + (off - f->segs[s].off)) / GRANULE;
			add_count(m->file, g);
			return;
		}
		break;
	}
	if (again) {
		again = false;
		if (read_proc_maps(pid))
			goto retry;
	}
	samples_unknown++;
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
			count_sample(pid, ip);
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
				add_map(pid, addr, len, pgoff, name, bid[0] ? bid : NULL);
		}
	}
	__atomic_store_n(&r->meta->data_tail, tail, __ATOMIC_RELEASE);
}

static long perf_open(struct perf_event_attr *a, pid_t pid, int cpu)
{
	return syscall(SYS_perf_event_open, a, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

/* ---- the profile ------------------------------------------------------- */

static int by_file_granule(const void *a, const void *b)
{
	const struct count *x = a, *y = b;
	if (x->file != y->file)
		return x->file < y->file ? -1 : 1;
	return x->granule < y->granule ? -1 : x->granule > y->granule;
}

/* Into out, or into t when it was opened before COMMAND ran (et_tool_out_try;
 * closed here, and freed). */
static int write_profile(struct et_tool_out *t, const char *out)
{
	if (!t)
		t = malloc(sizeof *t);
	FILE *f = !t ? NULL : t->f ? t->f : et_tool_out_open(t, out);
	if (!f) {
		if (!t)
			et_tool_err("out of memory");
		free(t);
		return -1;
	}
	/* one object per build-id: the same file mapped from two paths counts
	 * as its first path (granules are in its own address space either way) */
	int *canon = malloc((nfiles ? nfiles : 1) * sizeof *canon);
	bool *named = calloc(nfiles ? nfiles : 1, sizeof *named);
	if (!canon || !named) {
		et_tool_err("out of memory");
		exit(ET_EXIT_BAD);
	}
	for (size_t i = 0; i < nfiles; i++) {
		/* a file the kernel gave no build-id for (its note not in memory
		 * when it was mapped) and no sample needed: from the file now */
		if (!files[i].build_id[0] && !files[i].read)
			read_file(&files[i]);
		canon[i] = (int)i;
		for (size_t k = 0; k < i; k++)
			if (files[i].build_id[0] && !strcmp(files[k].build_id, files[i].build_id)) {
				canon[i] = canon[k];
				break;
			}
	}
	for (size_t i = 0; i < ncounts; i++)
		counts[i].file = canon[counts[i].file];
	if (ncounts)
		qsort(counts, ncounts, sizeof *counts, by_file_granule);
	char comment[128];
	snprintf(comment, sizeof comment, "recorded by enormoustext record: %llu samples, %llu outside any file",
	         (unsigned long long)samples_total, (unsigned long long)samples_unknown);
	struct et_sink sink;
	et_tool_sink_file(&sink, f);
	struct et_prof_writer w;
	et_profile_write_begin(&w, &sink, GRANULE, comment);
	for (size_t i = 0; i < ncounts;) {
		struct file *fl = &files[counts[i].file];
		size_t j = i;
		uint64_t sum = 0;
		for (; j < ncounts && counts[j].file == counts[i].file && counts[j].granule == counts[i].granule; j++)
			sum += counts[j].n;
		if (fl->build_id[0]) {                  /* no build-id: no key */
			if (!named[counts[i].file]) {
				named[counts[i].file] = true;
				et_profile_write_object(&w, fl->build_id, fl->path);
			}
			et_profile_write_count(&w, counts[i].granule * GRANULE, sum);
		}
		i = j;
	}
	/* The files it mapped and never ran in, as objects with no samples: the
	 * profile knows them, so ENORMOUSTEXT_PROFILE leaves their text cold
	 * instead of treating them as objects it has never seen. */
	for (size_t i = 0; i < nfiles; i++)
		if (files[i].build_id[0] && !named[canon[i]]) {
			named[canon[i]] = true;
			et_profile_write_object(&w, files[i].build_id, files[canon[i]].path);
		}
	et_profile_write_end(&w);
	free(canon);
	free(named);
	int rc = et_tool_out_close(t);
	free(t);
	return rc;
}

/* `--from-perf-script TEXT`: the output of
 *   perf script -F pid,ip --show-mmap-events
 * for an existing `perf record` (of the cpu-clock or any other event):
 * mapping lines and sample lines, attributed the same way. */
static int import_perf_script(const char *in, const char *out)
{
	FILE *f = strcmp(in, "-") ? fopen(in, "r") : stdin;
	if (!f) {
		et_tool_err("%s: %s", in, strerror(errno));
		return ET_EXIT_BAD;
	}
	char line[8192];
	size_t lineno = 0, used = 0;
	while (fgets(line, sizeof line, f)) {
		lineno++;
		unsigned pid;
		unsigned long long ip, addr, len, pgoff;
		int n = 0;
		char *mm = strstr(line, "PERF_RECORD_MMAP");
		if (mm) {
			/* "PERF_RECORD_MMAP2 PID/TID: [0xADDR(0xLEN) @ 0xPGOFF ...]: r-xp PATH" */
			char *br = strchr(mm, '[');
			char *end = br ? strstr(br, "]: ") : NULL;
			if (!br || !end || sscanf(mm, "PERF_RECORD_MMAP%*[2] %u/", &pid) < 1)
				if (!br || !end || sscanf(mm, "PERF_RECORD_MMAP %u/", &pid) != 1)
					continue;
			if (sscanf(br, "[0x%llx(0x%llx) @ %llx", &addr, &len, &pgoff) != 3)
				continue;
			char *perms = end + 3, *path = strchr(perms, ' ');
			if (!path)
				continue;
			path++;
			path[strcspn(path, "\n")] = '\0';
			/* MMAP2 lines say r-xp, MMAP lines only "x" */
			if (strchr(perms, 'x') && strchr(perms, 'x') < path)
				add_map(pid, addr, len, pgoff, path, NULL);
			used++;
			continue;
		}
		if (sscanf(line, " %u %llx %n", &pid, &ip, &n) == 2 && n > 0) {
			count_sample(pid, ip);
			used++;
		}
	}
	if (f != stdin)
		fclose(f);
	if (used == 0) {
		et_tool_err("%s: no samples or mappings (use: perf script -F pid,ip --show-mmap-events)", in);
		return ET_EXIT_BAD;
	}
	(void)lineno;
	if (write_profile(NULL, out) != 0)
		return ET_EXIT_BAD;
	fprintf(stderr, "enormoustext record: %llu sample%s (%llu outside any file) from %s written to %s\n",
	        (unsigned long long)samples_total, et_tool_s(samples_total),
	        (unsigned long long)samples_unknown, in, out);
	return ET_EXIT_OK;
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
		if (elf_version(EV_CURRENT) == EV_NONE) {
			et_tool_err("libelf: %s", elf_errmsg(-1));
			return ET_EXIT_BAD;
		}
		return import_perf_script(from, out);
	}
	if (optind >= argc)
		return et_tool_usage("give the COMMAND to run");
	if (elf_version(EV_CURRENT) == EV_NONE) {
		et_tool_err("libelf: %s", elf_errmsg(-1));
		return ET_EXIT_BAD;
	}
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
	int rc = exec_err ? 0 : write_profile(t, out) == 0 ? 0 : ET_EXIT_BAD;
	if (exec_err)
		out_drop(t);
	free(maps);
	free(files);
	free(counts);
	free(slots);
	if (rc == 0 && !exec_err)
		fprintf(stderr, "enormoustext record: %llu sample%s (%llu outside any file) written to %s\n",
		        (unsigned long long)samples_total, et_tool_s(samples_total),
		        (unsigned long long)samples_unknown, out);
	if (rc)
		return rc;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
