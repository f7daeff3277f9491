/*
 * tools/enormoustext/attrib.c — samples to (build-id, granule) counts, and
 * the profile they make: `record` (its own sampling and
 * --from-perf-script) and `profile import` (perf.data, pprof, perf script
 * text).  See attrib.h.
 *
 * Owns: the mappings of the processes a recording saw, the files they
 * hold (program headers and build-id, from the file as named or from
 * perf's build-id cache), the counts per (file, granule), and writing them
 * as a profile.
 * May call: core (profile: the writer; util), elffile.c (a file's PT_LOADs
 * and build-id), output.c, msg.c, common.c.
 * Never: writes a profile line itself (core/profile.c's writer does).
 */
#include "attrib.h"
#include "elffile.h"

#include <errno.h>
#include <fcntl.h>
#include <elf.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define GRANULE ET_PROFILE_RECORD_GRANULE

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
	char want[41];               /* the build-id the recording gave ("" none) */
	char build_id[41];           /* the key: want, else the file's own */
	struct loadseg segs[16];
	int nsegs;
	bool read, found;
	uint64_t unfound;            /* samples in it while not found */
};

struct count {
	int file;
	uint64_t granule;            /* vaddr / GRANULE */
	uint64_t n;
};

static bool live;
static struct map *maps;
static size_t nmaps, capmaps;
static struct file *files;
static size_t nfiles, capfiles;
static struct count *counts;
static size_t ncounts, capcounts;
static struct et_attr_totals tot;

/* The counts' arrays grown (et_tool_grow); out of memory ends the command:
 * a profile with counts missing would be a wrong one. */
static void *grow(void *p, size_t *cap, size_t need, size_t elem)
{
	void *q = et_tool_grow(p, cap, need, elem);
	if (!q) {
		et_tool_err("out of memory");
		exit(ET_EXIT_BAD);
	}
	return q;
}

void et_attr_init(bool is_live)
{
	live = is_live;
}

void et_attr_new_source(void)
{
	nmaps = 0;
}

/* The file at path: its PT_LOADs and build-id into f when it is the file
 * f means (f->want, when given, is its build-id); false when it is not. */
static bool try_file(struct file *f, const char *path)
{
	struct et_tool_elf x;
	if (et_tool_elf_open(&x, path, 0) != 0)
		return false;
	struct et_tool_seg *segs;
	long n = et_tool_elf_segments(&x, &segs);
	bool ok = false;
	if (n >= 0) {
		char bid[41];
		et_tool_elf_build_id_key(&x, bid);
		if (!f->want[0] || !strcmp(bid, f->want)) {
			f->nsegs = 0;
			for (long i = 0; i < n; i++)
				if (segs[i].type == PT_LOAD && f->nsegs < 16)
					f->segs[f->nsegs++] = (struct loadseg){ segs[i].offset, segs[i].filesz, segs[i].vaddr };
			snprintf(f->build_id, sizeof f->build_id, "%s", f->want[0] ? f->want : bid);
			ok = true;
		}
		free(segs);
	}
	et_tool_elf_close(&x);
	return ok;
}

/* The object's PT_LOADs and build-id (once): from the file as named, else
 * (a build-id it no longer has) from perf's build-id cache. */
static void read_file(struct file *f)
{
	f->read = true;
	f->found = try_file(f, f->path);
	if (f->found || !f->want[0])
		return;
	const char *dir = getenv("PERF_BUILDID_DIR"), *home = getenv("HOME");
	char p[PATH_MAX];
	if (dir && *dir)
		snprintf(p, sizeof p, "%s/.build-id/%.2s/%s/elf", dir, f->want, f->want + 2);
	else if (home && *home)
		snprintf(p, sizeof p, "%s/.debug/.build-id/%.2s/%s/elf", home, f->want, f->want + 2);
	else
		return;
	f->found = try_file(f, p);
}

int et_attr_file(const char *path, const char *build_id)
{
	if (!build_id)
		build_id = "";
	for (size_t i = 0; i < nfiles; i++)
		if (!strcmp(files[i].path, path) && !strcmp(files[i].want, build_id))
			return (int)i;
	files = grow(files, &capfiles, nfiles + 1, sizeof *files);
	struct file *f = &files[nfiles];
	memset(f, 0, sizeof *f);
	et_strlcpy(f->path, path, sizeof f->path);
	snprintf(f->want, sizeof f->want, "%s", build_id);
	snprintf(f->build_id, sizeof f->build_id, "%s", build_id);
	return (int)nfiles++;
}

void et_attr_map(uint32_t pid, uint64_t addr, uint64_t len, uint64_t pgoff, const char *path,
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
	maps[nmaps++] = (struct map){ pid, addr, len, pgoff, path[0] == '/' ? et_attr_file(path, build_id) : -1 };
}

/* counts by (file, granule): an open-addressing table of indexes into counts[] */
static uint32_t *slots;
static size_t nslots;

static size_t slot_of(int file, uint64_t g)
{
	uint64_t h = (g * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)(unsigned)file * 0xc2b2ae3d27d4eb4full);
	return (size_t)(h >> 20) & (nslots - 1);
}

static void add_count(int file, uint64_t g, uint64_t n)
{
	if (ncounts * 2 >= nslots) {
		size_t sz = nslots ? nslots * 2 : 4096;
		uint32_t *t = calloc(sz, sizeof *t);
		if (!t) {
			et_tool_err("out of memory");
			exit(ET_EXIT_BAD);
		}
		free(slots);
		slots = t;
		nslots = sz;
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
			c->n = c->n > UINT64_MAX - n ? UINT64_MAX : c->n + n;
			return;
		}
		i = (i + 1) & (nslots - 1);
	}
	counts = grow(counts, &capcounts, ncounts + 1, sizeof *counts);
	counts[ncounts] = (struct count){ file, g, n };
	slots[i] = (uint32_t)++ncounts;
}

/* Mappings made before the events were enabled (the program and its
 * interpreter, mapped by exec itself) have no MMAP2 record: for a sample
 * that no recorded mapping covers, read the process's maps, once per pid
 * (while it lives; `record` only). */
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
			et_attr_map(pid, lo, hi - lo, off, name, NULL);
			added = true;
		}
	}
	fclose(f);
	return added;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

void et_attr_outside(uint64_t n)
{
	tot.samples = sat_add(tot.samples, n);
	tot.outside = sat_add(tot.outside, n);
}

/* n samples at offset off of file fi (already counted in tot.samples). */
static void place(int fi, uint64_t off, uint64_t n)
{
	struct file *f = &files[fi];
	if (!f->read)
		read_file(f);
	if (!f->found || !f->build_id[0]) {
		if (!f->unfound)
			tot.files_unfound++;
		f->unfound = sat_add(f->unfound, n);
		tot.unfound = sat_add(tot.unfound, n);
		return;
	}
	for (int s = 0; s < f->nsegs; s++) {
		if (off < f->segs[s].off || off - f->segs[s].off >= f->segs[s].filesz)
			continue;
		add_count(fi, (f->segs[s].vaddr + (off - f->segs[s].off)) / GRANULE, n);
		return;
	}
	tot.unplaced = sat_add(tot.unplaced, n);
}

void et_attr_offset(int f, uint64_t off, uint64_t n)
{
	tot.samples = sat_add(tot.samples, n);
	place(f, off, n);
}

void et_attr_sample(uint32_t pid, uint64_t ip, uint64_t n)
{
	tot.samples = sat_add(tot.samples, n);
	bool again = live;
retry:
	for (size_t i = 0; i < nmaps; i++) {
		struct map *m = &maps[i];
		if ((m->pid != pid && m->pid != ~0u) || ip < m->addr || ip - m->addr >= m->len)
			continue;
		if (m->file < 0)
			break;
		place(m->file, m->pgoff + (ip - m->addr), n);
		return;
	}
	if (again) {
		again = false;
		if (read_proc_maps(pid))
			goto retry;
	}
	tot.outside = sat_add(tot.outside, n);
}

void et_attr_totals(struct et_attr_totals *t)
{
	*t = tot;
}

void et_attr_summary(char *buf, size_t cap)
{
	uint64_t out = tot.unfound + tot.unplaced;
	int n = snprintf(buf, cap, "%llu sample%s (%llu outside any file", (unsigned long long)tot.samples,
	                 et_tool_s(tot.samples), (unsigned long long)tot.outside);
	if (n > 0 && (size_t)n < cap && out)
		n += snprintf(buf + n, cap - (size_t)n, ", %llu left out", (unsigned long long)out);
	if (n > 0 && (size_t)n < cap)
		snprintf(buf + n, cap - (size_t)n, ")");
}

void et_attr_say_unfound(void)
{
	size_t said = 0;
	for (size_t i = 0; i < nfiles; i++) {
		const struct file *f = &files[i];
		if (!f->unfound)
			continue;
		if (said++ >= 4)
			continue;
		if (!f->found && f->want[0])
			et_tool_err("%s (build-id %s): %llu sample%s left out: no such file here, in perf's "
			            "build-id cache neither", f->path, f->want, (unsigned long long)f->unfound,
			            et_tool_s(f->unfound));
		else if (!f->found)
			et_tool_err("%s: %llu sample%s left out: not readable as an ELF file here", f->path,
			            (unsigned long long)f->unfound, et_tool_s(f->unfound));
		else
			et_tool_err("%s: %llu sample%s left out: it has no build-id (a profile's key)", f->path,
			            (unsigned long long)f->unfound, et_tool_s(f->unfound));
	}
	if (said > 4)
		et_tool_err("and %zu more file%s with samples left out", said - 4, et_tool_s(said - 4));
	if (tot.unplaced)
		et_tool_err("%llu sample%s left out: at file offsets that no PT_LOAD of their file holds",
		            (unsigned long long)tot.unplaced, et_tool_s(tot.unplaced));
}

static int by_file_granule(const void *a, const void *b)
{
	const struct count *x = a, *y = b;
	if (x->file != y->file)
		return x->file < y->file ? -1 : 1;
	return x->granule < y->granule ? -1 : x->granule > y->granule;
}

int et_attr_write(struct et_tool_out *t, const char *out, const char *comment)
{
	bool to_stdout = !t && !out;
	if (!t && out && (t = malloc(sizeof *t)))
		t->f = NULL;
	FILE *f = to_stdout ? stdout : !t ? NULL : t->f ? t->f : et_tool_out_open(t, out);
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
	bool *skip = calloc(nfiles ? nfiles : 1, sizeof *skip);
	if (!canon || !named || !skip) {
		et_tool_err("out of memory");
		exit(ET_EXIT_BAD);
	}
	for (size_t i = 0; i < nfiles; i++) {
		/* a file the recording gave no build-id for and no sample needed:
		 * from the file now */
		if (!files[i].build_id[0] && !files[i].read)
			read_file(&files[i]);
		canon[i] = (int)i;
		for (size_t k = 0; k < i; k++)
			if (files[i].build_id[0] && !strcmp(files[k].build_id, files[i].build_id)) {
				canon[i] = canon[k];
				break;
			}
	}
	/* a build-id with samples left out (one of its files not found here) is
	 * not written: with fewer counts than it had, or none, it would say its
	 * text is colder than it was */
	for (size_t i = 0; i < nfiles; i++)
		if (files[i].unfound)
			skip[canon[i]] = true;
	for (size_t i = 0; i < ncounts; i++)
		counts[i].file = canon[counts[i].file];
	if (ncounts)
		qsort(counts, ncounts, sizeof *counts, by_file_granule);
	struct et_sink sink;
	et_tool_sink_file(&sink, f);
	struct et_prof_writer w;
	et_profile_write_begin(&w, &sink, GRANULE, comment);
	for (size_t i = 0; i < ncounts;) {
		int fi = counts[i].file;
		size_t j = i;
		uint64_t sum = 0;
		for (; j < ncounts && counts[j].file == fi && counts[j].granule == counts[i].granule; j++)
			sum = sat_add(sum, counts[j].n);
		if (!skip[fi]) {
			if (!named[fi]) {
				named[fi] = true;
				et_profile_write_object(&w, files[fi].build_id, files[fi].path);
			}
			et_profile_write_count(&w, counts[i].granule * GRANULE, sum);
		}
		i = j;
	}
	/* The files it mapped and never ran in, as objects with no samples: the
	 * profile knows them, so ENORMOUSTEXT_PROFILE leaves their text cold
	 * instead of treating them as objects it has never seen. */
	for (size_t i = 0; i < nfiles; i++)
		if (files[i].build_id[0] && !named[canon[i]] && !skip[canon[i]]) {
			named[canon[i]] = true;
			et_profile_write_object(&w, files[i].build_id, files[canon[i]].path);
		}
	et_profile_write_end(&w);
	tot.objects = 0;
	for (size_t i = 0; i < nfiles; i++)
		tot.objects += named[i];
	free(canon);
	free(named);
	free(skip);
	int rc = 0;
	if (to_stdout) {
		if (fflush(stdout) != 0 || ferror(stdout)) {
			et_tool_err("standard output: %s", strerror(errno ? errno : EIO));
			rc = -1;
		}
	} else {
		rc = et_tool_out_close(t);
		free(t);
	}
	return rc;
}
