/*
 * tools/enormoustext/stat.c — `enormoustext stat PID...` or `stat --all`
 * (options: the table below): how much of each process's text is on huge
 * pages, per mapped object, from /proc/PID/smaps (parsed by the library's
 * own smaps reader).
 *
 * Text is every executable mapping.  What backs it, per mapping:
 *   AnonHugePages   anonymous huge pages (the library's thp/collapse copies)
 *   FilePmdMapped   the file mapped huge from the page cache
 *   ShmemPmdMapped  shmem/tmpfs huge pages
 *   *_Hugetlb       the hugetlb pool (the library's hugetlb copies)
 *
 * Attribution.  The library replaces 2 MiB windows of a file's text with
 * anonymous copies, so after it ran the text of one object is a run of
 * mappings: file r-xp, anonymous r-xp (no path; "/anon_hugepage (deleted)"
 * for a hugetlb copy), file r-xp...  Which object an anonymous executable
 * mapping belongs to is decided from what is known, not from the order of
 * the mappings (a copy of an object's first window has no mapping of that
 * object before it): core/smaps.c's et_smaps_attribute reads the ELF
 * headers of each file the process maps, where its executable PT_LOADs lie
 * at its load bias, and credits an anonymous executable mapping inside one
 * of them to that object; only where a file cannot be read does the old
 * rule decide (the nearest file mappings on both sides are that file's).
 * The same rule serves perfmap, collapse and the library's JIT figures.
 * Anything else executable and anonymous (JIT code) is listed as
 * "[anonymous]", a memfd's executable view under its name, both of kind
 * "jit"; [vdso] and the like under their own names.
 *
 * Several processes are listed in the order given; --all's by huge bytes,
 * largest first (then by text, then by PID), and --all ends with their
 * total (a TOTAL line, JSON's "total"; --prometheus writes the
 * enormoustext_total_* metrics of the processes it read, --all or not).
 *
 * --prometheus writes the same figures as metrics (the text exposition
 * format, prom.c), with the host's THP modes, hugetlb pools and vmstat
 * counters of huge pages, for node_exporter's textfile collector; -o writes
 * any of the three into a file by outfile.c's rules (beside and renamed in).
 *
 * Owns: `stat`: per process and per object, how much text is huge and of
 * which kind, as text, JSON or Prometheus metrics.
 * May call: core (smaps, json, sysinfo), common.c, output.c (-o), prom.c,
 * msg.c.
 * Never: changes the processes it looks at.
 */
#include "tool.h"
#include "opts.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

enum vclass { V_FILE, V_PSEUDO, V_ANON };

struct sobj {
	const char *path;       /* in the smaps string pool, or a literal */
	uint64_t inode;
	enum vclass cls;
	uint64_t text, copied, anon, file, shmem, hugetlb;
	unsigned maps;
};

struct sproc {
	long pid;
	char comm[64];
	struct sobj *objs;
	size_t nobjs, cap;
	uint64_t text, copied, anon, file, shmem, hugetlb;
};

struct stat_opts {
	bool json, summary, all, prometheus;
	const char *proc, *output;
};

static enum vclass classify(const char *path)
{
	if (!path[0])
		return V_ANON;
	/* Anonymous memory that smaps shows with a name: a MAP_HUGETLB or a
	 * shared anonymous mapping, or one named with PR_SET_VMA_ANON_NAME. */
	if (!strncmp(path, "/anon_hugepage", 14) || !strcmp(path, "/dev/zero (deleted)") ||
	    !strncmp(path, "[anon:", 6) || !strncmp(path, "[anon_shmem:", 12))
		return V_ANON;
	/* a memfd's executable view: JIT code (the W^X double mapping) */
	if (!strncmp(path, "/memfd:", 7))
		return V_ANON;
	if (path[0] == '[')
		return V_PSEUDO;
	return V_FILE;
}

static struct sobj *obj_get(struct sproc *p, const char *path, uint64_t inode, enum vclass cls)
{
	for (size_t i = 0; i < p->nobjs; i++)
		if (p->objs[i].cls == cls && p->objs[i].inode == inode && !strcmp(p->objs[i].path, path))
			return &p->objs[i];
	if (p->nobjs == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 32;
		struct sobj *o = realloc(p->objs, cap * sizeof *o);
		if (!o)
			return NULL;
		p->objs = o;
		p->cap = cap;
	}
	struct sobj *o = &p->objs[p->nobjs++];
	memset(o, 0, sizeof *o);
	o->path = path;
	o->inode = inode;
	o->cls = cls;
	return o;
}

static int collect(const struct et_smaps *sm, struct sproc *p)
{
	for (long i = 0; i < (long)sm->count; i++) {
		const struct et_vma *v = &sm->vmas[i];
		if (!(v->prot & PROT_EXEC))
			continue;
		const char *path = et_vma_path(sm, v);
		enum vclass cls = classify(path);
		uint64_t inode = v->inode;
		bool copied = false;
		if (cls == V_ANON && strncmp(path, "/memfd:", 7)) {
			const struct et_vma *va = et_smaps_copied_from(sm, (size_t)i);
			if (va) {
				path = et_vma_path(sm, va);
				inode = va->inode;
				cls = V_FILE;
				copied = true;
			} else {
				path = "[anonymous]";
				inode = 0;
			}
		}
		struct sobj *o = obj_get(p, path, inode, cls);
		if (!o)
			return -ENOMEM;
		uint64_t len = v->end - v->start;
		o->text += len;
		o->copied += copied ? len : 0;
		o->anon += v->anon_huge;
		o->file += v->file_pmd;
		o->shmem += v->shmem_pmd;
		o->hugetlb += v->hugetlb;
		o->maps++;
		p->text += len;
		p->copied += copied ? len : 0;
		p->anon += v->anon_huge;
		p->file += v->file_pmd;
		p->shmem += v->shmem_pmd;
		p->hugetlb += v->hugetlb;
	}
	return 0;
}

static uint64_t obj_huge(const struct sobj *o)
{
	return o->anon + o->file + o->shmem + o->hugetlb;
}

static uint64_t proc_huge(const struct sproc *p)
{
	return p->anon + p->file + p->shmem + p->hugetlb;
}

static void print_summary_header(FILE *f)
{
	fprintf(f, "%8s %9s %9s %9s %9s %9s %9s  %s\n", "PID", "TEXT", "HUGE", "ANON", "FILE", "SHMEM",
	       "HUGETLB", "COMMAND");
}

static void print_text(FILE *out, const struct sproc *p, const struct stat_opts *o, bool first)
{
	char a[16], b[16], c[16], d[16], e[16], f[16];
	if (o->summary) {
		fprintf(out, "%8ld %9s %9s %9s %9s %9s %9s  %s\n", p->pid, et_tool_size(a, sizeof a, p->text),
		       et_tool_size(b, sizeof b, proc_huge(p)), et_tool_size(c, sizeof c, p->anon),
		       et_tool_size(d, sizeof d, p->file), et_tool_size(e, sizeof e, p->shmem),
		       et_tool_size(f, sizeof f, p->hugetlb), p->comm);
		return;
	}
	if (!first)
		fputc('\n', out);
	uint64_t h = proc_huge(p);
	fprintf(out, "PID %ld (%s): %s of text, %s on huge pages", p->pid, p->comm,
	       et_tool_size(a, sizeof a, p->text), et_tool_size(b, sizeof b, h));
	if (p->text)
		fprintf(out, " (%.0f%%)", 100.0 * (double)h / (double)p->text);
	fprintf(out, ": anon %s, file %s, shmem %s, hugetlb %s\n", et_tool_size(c, sizeof c, p->anon),
	       et_tool_size(d, sizeof d, p->file), et_tool_size(e, sizeof e, p->shmem),
	       et_tool_size(f, sizeof f, p->hugetlb));
	if (!p->nobjs) {
		fprintf(out, "  (no executable mappings)\n");
		return;
	}
	fprintf(out, "%9s %9s %9s %9s %9s %9s  %s\n", "TEXT", "HUGE", "ANON", "FILE", "SHMEM", "HUGETLB",
	       "OBJECT");
	for (size_t i = 0; i < p->nobjs; i++) {
		const struct sobj *x = &p->objs[i];
		fprintf(out, "%9s %9s %9s %9s %9s %9s  %s", et_tool_size(a, sizeof a, x->text),
		       et_tool_size(b, sizeof b, obj_huge(x)), et_tool_size(c, sizeof c, x->anon),
		       et_tool_size(d, sizeof d, x->file), et_tool_size(e, sizeof e, x->shmem),
		       et_tool_size(f, sizeof f, x->hugetlb), x->path);
		if (x->copied)
			fprintf(out, " (%s of it in anonymous copies)", et_tool_size(a, sizeof a, x->copied));
		fputc('\n', out);
	}
	/* a copy is anonymous memory: the kernel's uprobes attach to files */
	bool copies = false;
	for (size_t i = 0; i < p->nobjs && !copies; i++)
		copies = p->objs[i].copied != 0;
	if (copies)
		fprintf(out, "  anonymous copies: a uprobe (perf probe, bpftrace, SystemTap) set on their text after the move\n"
		             "  never fires there; ENORMOUSTEXT_EXCLUDE=OBJECT keeps an object traceable (zero-copy\n"
		             "  windows keep their probes; one set before the move keeps its window where it is)\n");
}

static void kinds_json(struct et_json *j, uint64_t anon, uint64_t file, uint64_t shmem,
                       uint64_t hugetlb)
{
	et_json_obj(j, "huge_by_kind");
	et_json_u64(j, "anon", anon);
	et_json_u64(j, "file", file);
	et_json_u64(j, "shmem", shmem);
	et_json_u64(j, "hugetlb", hugetlb);
	et_json_obj_end(j);
}

/* With --summary, what its line says: the process's figures, no objects. */
static void print_json(struct et_json *j, const struct sproc *p, bool summary)
{
	/* V_ANON: executable memory no file backs (but the library's copies,
	 * attributed to their files): what JITs make, kind "jit" */
	static const char *cls_name[] = { "file", "pseudo", "jit" };
	et_json_obj(j, NULL);
	et_json_i64(j, "pid", p->pid);
	et_json_str(j, "command", p->comm);
	et_json_u64(j, "text_bytes", p->text);
	et_json_u64(j, "huge_bytes", proc_huge(p));
	kinds_json(j, p->anon, p->file, p->shmem, p->hugetlb);
	if (summary) {
		et_json_obj_end(j);
		return;
	}
	et_json_arr(j, "objects");
	for (size_t i = 0; i < p->nobjs; i++) {
		const struct sobj *x = &p->objs[i];
		et_json_obj(j, NULL);
		et_json_str(j, "path", x->path);
		et_json_str(j, "kind", cls_name[x->cls]);
		et_json_u64(j, "text_bytes", x->text);
		et_json_u64(j, "huge_bytes", obj_huge(x));
		kinds_json(j, x->anon, x->file, x->shmem, x->hugetlb);
		et_json_u64(j, "copied_text_bytes", x->copied);
		et_json_u64(j, "mappings", x->maps);
		et_json_obj_end(j);
	}
	et_json_arr_end(j);
	et_json_obj_end(j);
}

/* 0, or -errno from reading DIR/PID/smaps (-ENOENT: no such process). */
static int read_proc(const char *proc, long pid, struct et_smaps *sm, struct sproc *p)
{
	char path[PATH_MAX];
	memset(p, 0, sizeof *p);
	p->pid = pid;
	snprintf(path, sizeof path, "%s/%ld/comm", proc, pid);
	if (et_tool_read(path, p->comm, sizeof p->comm) < 0)
		p->comm[0] = '\0';
	snprintf(path, sizeof path, "%s/%ld/smaps", proc, pid);
	int err = et_smaps_read(sm, path);
	if (err == -ESRCH)
		err = -ENOENT;
	if (err)
		return err;
	/* whose text each anonymous executable mapping is: the files the
	 * process maps, read through DIR/PID (the one rule, core/smaps.c) */
	snprintf(path, sizeof path, "%s/%ld", proc, pid);
	et_smaps_attribute(sm, path);
	err = collect(sm, p);
	if (err)
		et_smaps_free(sm);
	return err;
}

static void proc_free(struct sproc *p)
{
	free(p->objs);
	p->objs = NULL;
}

static void report_error(const char *proc, long pid, int err)
{
	if (err == -ENOENT)
		et_tool_err("PID %ld: no such process", pid);
	else if (err == -EACCES || err == -EPERM)
		et_tool_err("PID %ld: permission denied reading %s/%ld/smaps (%s)", pid, proc, pid,
		            et_tool_denied_why());
	else if (err == -ENOMEM)
		et_tool_err("PID %ld: out of memory", pid);
	else
		et_tool_err("PID %ld: cannot read %s/%ld/smaps: %s", pid, proc, pid, strerror(-err));
}

static int cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;
	return (x > y) - (x < y);
}

/* Every numeric entry of the proc directory, sorted. */
static long *list_pids(const char *proc, size_t *n)
{
	DIR *d = opendir(proc);
	long *v = NULL;
	size_t cap = 0;
	*n = 0;
	if (!d)
		return NULL;
	struct dirent *e;
	while ((e = readdir(d))) {
		long pid;
		if (et_tool_parse_pid(e->d_name, &pid))
			continue;
		if (*n == cap) {
			cap = cap ? 2 * cap : 256;
			long *nv = realloc(v, cap * sizeof *nv);
			if (!nv)
				break;
			v = nv;
		}
		v[(*n)++] = pid;
	}
	closedir(d);
	if (v)
		qsort(v, *n, sizeof *v, cmp_long);
	else
		v = calloc(1, sizeof *v);
	return v;
}

/* The proc directory, checked before any PID: without it, every PID would
 * be "no such process".  false after one line naming it. */
static bool proc_dir_ok(const char *proc)
{
	struct stat st;
	int e = stat(proc, &st) != 0 ? errno : S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
	if (e)
		et_tool_err("%s: %s (--proc)", proc, e == ENOENT ? "no such directory" :
		            e == ENOTDIR ? "not a directory" : strerror(e));
	return !e;
}

/* --------------------------------------------------- what is kept */

/* Every process read is kept until all are (to be sorted, and, with
 * --prometheus, each family's samples written together): its figures,
 * and its objects with their paths copied out of the smaps pool.  With
 * --prometheus, only the objects with at least one huge page of text
 * (smaller ones cannot have a huge page: they count in the process's
 * figures only, which keeps the series few), merged by path (one series
 * per label set). */
struct pset {
	struct sproc *v;
	size_t n, cap;
	size_t unreadable;
};

static const char *const kind_name[4] = { "anon", "file", "shmem", "hugetlb" };

/* smaps writes a newline in a path as "\012", the one character it escapes
 * there: the path as it is (a name with a literal "\012" in it reads the
 * same, and is taken for one with a newline).  Only for --prometheus: the
 * text and JSON show smaps's path. */
static char *path_decode(const char *s)
{
	char *d = malloc(strlen(s) + 1), *q = d;
	if (!d)
		return NULL;
	for (const char *p = s; *p;) {
		if (!strncmp(p, "\\012", 4)) {
			*q++ = '\n';
			p += 4;
		} else {
			*q++ = *p++;
		}
	}
	*q = '\0';
	return d;
}

static void free_objs(struct sproc *p, size_t from)
{
	for (size_t i = from; i < p->nobjs; i++)
		free((char *)p->objs[i].path);
	p->nobjs = from;
}

/* p (read, its smaps still open) into set: it owns p's objects from now
 * on.  prom: the objects as --prometheus wants them (above); H the PMD size. */
static int keep(struct pset *set, struct sproc *p, bool prom, uint64_t H)
{
	size_t k = 0;
	int err = 0;
	for (size_t i = 0; i < p->nobjs; i++) {
		struct sobj x = p->objs[i];
		char *path = prom ? path_decode(x.path) : strdup(x.path);
		if (!path) {
			err = -ENOMEM;
			break;
		}
		size_t j = 0;
		while (prom && j < k && strcmp(p->objs[j].path, path))
			j++;
		if (prom && j < k) {
			struct sobj *y = &p->objs[j];
			y->text += x.text;
			y->copied += x.copied;
			y->anon += x.anon;
			y->file += x.file;
			y->shmem += x.shmem;
			y->hugetlb += x.hugetlb;
			y->maps += x.maps;
			free(path);
			continue;
		}
		x.path = path;
		p->objs[k++] = x;
	}
	p->nobjs = k;
	if (err) {
		free_objs(p, 0);
		return err;
	}
	if (prom) {
		size_t kept = 0;
		for (size_t i = 0; i < p->nobjs; i++) {
			if (p->objs[i].text >= H)
				p->objs[kept++] = p->objs[i];
			else
				free((char *)p->objs[i].path);
		}
		p->nobjs = kept;
	}
	if (set->n == set->cap) {
		size_t cap = set->cap ? 2 * set->cap : 64;
		struct sproc *v = realloc(set->v, cap * sizeof *v);
		if (!v) {
			free_objs(p, 0);
			return -ENOMEM;
		}
		set->v = v;
		set->cap = cap;
	}
	set->v[set->n++] = *p;
	p->objs = NULL;
	p->nobjs = p->cap = 0;
	return 0;
}

static void set_free(struct pset *set)
{
	for (size_t i = 0; i < set->n; i++) {
		free_objs(&set->v[i], 0);
		free(set->v[i].objs);
	}
	free(set->v);
	memset(set, 0, sizeof *set);
}

static int cmp_u64_desc(uint64_t a, uint64_t b)
{
	return (a < b) - (a > b);
}

static int cmp_huge(const void *a, const void *b)
{
	const struct sproc *x = a, *y = b;
	int c = cmp_u64_desc(proc_huge(x), proc_huge(y));
	if (!c)
		c = cmp_u64_desc(x->text, y->text);
	return c ? c : (x->pid > y->pid) - (x->pid < y->pid);
}

/* The total of the processes kept: a struct sproc with no objects. */
static struct sproc set_total(const struct pset *set)
{
	struct sproc t;
	memset(&t, 0, sizeof t);
	for (size_t i = 0; i < set->n; i++) {
		const struct sproc *p = &set->v[i];
		t.text += p->text;
		t.copied += p->copied;
		t.anon += p->anon;
		t.file += p->file;
		t.shmem += p->shmem;
		t.hugetlb += p->hugetlb;
	}
	return t;
}

static void print_total_text(FILE *out, const struct sproc *t, size_t n, bool summary)
{
	char a[16], b[16], c[16], d[16], e[16], f[16], g[16];
	char what[48];
	snprintf(what, sizeof what, "(%zu process%s)", n, et_tool_plural(n, "es"));
	if (summary) {
		fprintf(out, "%8s %9s %9s %9s %9s %9s %9s  %s\n", "TOTAL", et_tool_size(a, sizeof a, t->text),
		        et_tool_size(b, sizeof b, proc_huge(t)), et_tool_size(c, sizeof c, t->anon),
		        et_tool_size(d, sizeof d, t->file), et_tool_size(e, sizeof e, t->shmem),
		        et_tool_size(f, sizeof f, t->hugetlb), what);
		return;
	}
	uint64_t h = proc_huge(t);
	fprintf(out, "\nTOTAL %s: %s of text, %s on huge pages", what, et_tool_size(a, sizeof a, t->text),
	        et_tool_size(b, sizeof b, h));
	if (t->text)
		fprintf(out, " (%.0f%%)", 100.0 * (double)h / (double)t->text);
	fprintf(out, ": anon %s, file %s, shmem %s, hugetlb %s; %s in anonymous copies\n",
	        et_tool_size(c, sizeof c, t->anon), et_tool_size(d, sizeof d, t->file),
	        et_tool_size(e, sizeof e, t->shmem), et_tool_size(f, sizeof f, t->hugetlb),
	        et_tool_size(g, sizeof g, t->copied));
}

/* ------------------------------------------------------- --prometheus */

static void pm_u64(FILE *f, const char *name, const char *type, const char *help, uint64_t v)
{
	et_prom_family(f, name, type, help);
	et_prom_sample(f, name, NULL, 0, v);
}

#define PM_THP "/sys/kernel/mm/transparent_hugepage"
#define PM_HUGETLB "/sys/kernel/mm/hugepages"

/* /proc/vmstat's counters of huge pages: every thp_* (events since boot),
 * the compaction outcomes (what defrag costs), and the huge pages in use
 * now (printed in huge pages of the PMD size). */
static int vmstat_kind(const char *name)
{
	static const char *const gauges[] = { "nr_anon_transparent_hugepages", "nr_file_hugepages",
		                              "nr_file_pmdmapped", "nr_shmem_hugepages",
		                              "nr_shmem_pmdmapped" };
	static const char *const counters[] = { "compact_stall", "compact_fail", "compact_success" };
	if (!strncmp(name, "thp_", 4))
		return 'c';
	for (size_t i = 0; i < sizeof counters / sizeof *counters; i++)
		if (!strcmp(name, counters[i]))
			return 'c';
	for (size_t i = 0; i < sizeof gauges / sizeof *gauges; i++)
		if (!strcmp(name, gauges[i]))
			return 'g';
	return 0;
}

static void pm_vmstat(FILE *f, const char *proc)
{
	static char buf[65536];
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/vmstat", proc);
	if (et_read_file(path, buf, sizeof buf) < 0)
		return;
	for (char *line = buf, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		char name[96], metric[160], help[200];
		unsigned long long v;
		if (sscanf(line, "%95s %llu", name, &v) != 2)
			continue;
		int k = vmstat_kind(name);
		if (!k)
			continue;
		snprintf(metric, sizeof metric, "enormoustext_vmstat_%s%s", name, k == 'c' ? "_total" : "");
		if (!et_prom_name_ok(metric))
			continue;
		if (k == 'c')
			snprintf(help, sizeof help, "%s in /proc/vmstat: events since boot", name);
		else
			snprintf(help, sizeof help, "%s in /proc/vmstat: now, in huge pages of the PMD size", name);
		pm_u64(f, metric, k == 'c' ? "counter" : "gauge", help, v);
	}
}

static void pm_host(FILE *f, const char *proc)
{
	struct et_prom_label l[1];
	et_prom_family(f, "enormoustext_build_info", "gauge",
	               "The enormoustext command that wrote these metrics, as the version label; value 1");
	l[0] = (struct et_prom_label){ "version", ENORMOUSTEXT_VERSION_STRING };
	et_prom_sample(f, "enormoustext_build_info", l, 1, 1);

	struct et_sysinfo si;
	et_sysinfo_read_pmd(&si, "");
	et_prom_family(f, "enormoustext_pmd_size_bytes", "gauge",
	               "The huge page (PMD) size, " PM_THP "/hpage_pmd_size");
	if (si.pmd_size_read)
		et_prom_sample(f, "enormoustext_pmd_size_bytes", NULL, 0, si.pmd_size);

	static const struct {
		const char *metric, *file, *help;
	} choice[] = {
		{ "enormoustext_thp_enabled_info", PM_THP "/enabled",
		  "Transparent huge pages for anonymous memory, the mode label (always, madvise, never) "
		  "from " PM_THP "/enabled; value 1" },
		{ "enormoustext_thp_defrag_info", PM_THP "/defrag",
		  "What a huge page fault does when none is free, the mode label (always, defer, "
		  "defer+madvise, madvise, never) from " PM_THP "/defrag; value 1" },
		{ "enormoustext_thp_shmem_enabled_info", PM_THP "/shmem_enabled",
		  "Transparent huge pages for shmem and tmpfs, the mode label from " PM_THP
		  "/shmem_enabled; value 1" },
	};
	for (size_t i = 0; i < sizeof choice / sizeof *choice; i++) {
		char mode[64];
		et_prom_family(f, choice[i].metric, "gauge", choice[i].help);
		if (et_tool_read_choice(choice[i].file, mode, sizeof mode) > 0) {
			l[0] = (struct et_prom_label){ "mode", mode };
			et_prom_sample(f, choice[i].metric, l, 1, 1);
		}
	}

	static const struct {
		const char *metric, *file, *help;
	} pool[] = {
		{ "enormoustext_hugetlb_pages", "nr_hugepages",
		  "Hugetlb pool: its pages of page_size_bytes (" PM_HUGETLB "/hugepages-*/nr_hugepages)" },
		{ "enormoustext_hugetlb_free_pages", "free_hugepages",
		  "Hugetlb pool: its free pages, reserved ones included (free_hugepages)" },
		{ "enormoustext_hugetlb_reserved_pages", "resv_hugepages",
		  "Hugetlb pool: pages promised to mappings and not yet faulted in (resv_hugepages)" },
		{ "enormoustext_hugetlb_surplus_pages", "surplus_hugepages",
		  "Hugetlb pool: pages above nr_hugepages, from overcommit (surplus_hugepages)" },
	};
	uint64_t sizes[16];
	size_t nsizes = et_tool_size_dirs(PM_HUGETLB, sizes, sizeof sizes / sizeof *sizes);
	for (size_t i = 0; i < sizeof pool / sizeof *pool; i++) {
		et_prom_family(f, pool[i].metric, "gauge", pool[i].help);
		for (size_t s = 0; s < nsizes; s++) {
			char path[PATH_MAX], val[32], size[24];
			uint64_t v;
			snprintf(path, sizeof path, PM_HUGETLB "/hugepages-%llukB/%s",
			         (unsigned long long)(sizes[s] >> 10), pool[i].file);
			if (et_tool_read(path, val, sizeof val) < 0 || et_tool_parse_u64(val, &v))
				continue;
			snprintf(size, sizeof size, "%llu", (unsigned long long)sizes[s]);
			l[0] = (struct et_prom_label){ "page_size_bytes", size };
			et_prom_sample(f, pool[i].metric, l, 1, v);
		}
	}
	pm_vmstat(f, proc);
}

/* Which figure of a process or an object a family shows. */
enum pm_fig { PM_TEXT, PM_COPIED, PM_HUGE };

static void pm_fig_samples(FILE *f, const char *metric, struct et_prom_label *l, size_t n,
                           enum pm_fig fig, uint64_t text, uint64_t copied, const uint64_t k[4])
{
	if (fig == PM_TEXT) {
		et_prom_sample(f, metric, l, n, text);
	} else if (fig == PM_COPIED) {
		et_prom_sample(f, metric, l, n, copied);
	} else {
		for (int i = 0; i < 4; i++) {
			l[n].name = "kind";
			l[n].value = kind_name[i];
			et_prom_sample(f, metric, l, n + 1, k[i]);
		}
	}
}

static void pm_write(FILE *f, const struct pset *set, const struct stat_opts *o)
{
	pm_host(f, o->proc);
	pm_u64(f, "enormoustext_processes", "gauge",
	       "Processes read, with text (those in the enormoustext_process_* metrics)", set->n);
	pm_u64(f, "enormoustext_processes_unreadable", "gauge",
	       "Processes whose smaps could not be read (permission denied, or another error); "
	       "those that ended while being read are not counted", set->unreadable);
	static const struct {
		const char *metric, *help;
		enum pm_fig fig;
	} proc_f[] = {
		{ "enormoustext_process_text_bytes", "Text of the process: its executable mappings", PM_TEXT },
		{ "enormoustext_process_huge_bytes",
		  "Text of the process on huge pages, by kind: anon (AnonHugePages: copies by "
		  "libenormoustext's thp and collapse), file (FilePmdMapped: the file mapped huge from "
		  "the page cache), shmem (ShmemPmdMapped), hugetlb (Private_Hugetlb + Shared_Hugetlb)",
		  PM_HUGE },
		{ "enormoustext_process_copied_text_bytes",
		  "Text of the process in anonymous copies of its files' text (libenormoustext's work)",
		  PM_COPIED },
	}, total_f[] = {
		{ "enormoustext_total_text_bytes",
		  "Text of all the processes read (the sum of enormoustext_process_text_bytes)", PM_TEXT },
		{ "enormoustext_total_huge_bytes",
		  "Text of all the processes read on huge pages, by kind (the sum of "
		  "enormoustext_process_huge_bytes)", PM_HUGE },
		{ "enormoustext_total_copied_text_bytes",
		  "Text of all the processes read in anonymous copies (the sum of "
		  "enormoustext_process_copied_text_bytes)", PM_COPIED },
	}, obj_f[] = {
		{ "enormoustext_object_text_bytes",
		  "Text of one mapped object (object: its path) with at least one huge page of text: "
		  "its file mappings and its anonymous copies (inside its executable segments)", PM_TEXT },
		{ "enormoustext_object_huge_bytes", "Text of the object on huge pages, by kind (as "
		  "enormoustext_process_huge_bytes)", PM_HUGE },
		{ "enormoustext_object_copied_text_bytes", "Text of the object in anonymous copies", PM_COPIED },
	};
	struct et_prom_label l[4];
	char pid[24];
	for (size_t fi = 0; fi < sizeof proc_f / sizeof *proc_f; fi++) {
		et_prom_family(f, proc_f[fi].metric, "gauge", proc_f[fi].help);
		for (size_t i = 0; i < set->n; i++) {
			const struct sproc *p = &set->v[i];
			const uint64_t k[4] = { p->anon, p->file, p->shmem, p->hugetlb };
			snprintf(pid, sizeof pid, "%ld", p->pid);
			l[0] = (struct et_prom_label){ "pid", pid };
			l[1] = (struct et_prom_label){ "comm", p->comm };
			pm_fig_samples(f, proc_f[fi].metric, l, 2, proc_f[fi].fig, p->text, p->copied, k);
		}
	}
	const struct sproc t = set_total(set);
	const uint64_t tk[4] = { t.anon, t.file, t.shmem, t.hugetlb };
	for (size_t fi = 0; fi < sizeof total_f / sizeof *total_f; fi++) {
		et_prom_family(f, total_f[fi].metric, "gauge", total_f[fi].help);
		pm_fig_samples(f, total_f[fi].metric, l, 0, total_f[fi].fig, t.text, t.copied, tk);
	}
	if (o->summary)
		return;
	for (size_t fi = 0; fi < sizeof obj_f / sizeof *obj_f; fi++) {
		et_prom_family(f, obj_f[fi].metric, "gauge", obj_f[fi].help);
		for (size_t i = 0; i < set->n; i++) {
			const struct sproc *p = &set->v[i];
			snprintf(pid, sizeof pid, "%ld", p->pid);
			l[0] = (struct et_prom_label){ "pid", pid };
			l[1] = (struct et_prom_label){ "comm", p->comm };
			for (size_t j = 0; j < p->nobjs; j++) {
				const struct sobj *x = &p->objs[j];
				const uint64_t k[4] = { x->anon, x->file, x->shmem, x->hugetlb };
				l[2] = (struct et_prom_label){ "object", x->path };
				pm_fig_samples(f, obj_f[fi].metric, l, 3, obj_f[fi].fig, x->text, x->copied, k);
			}
		}
	}
}

enum { O_JSON = 1, O_PROMETHEUS, O_SUMMARY, O_ALL, O_OUTPUT, O_PROC };

static const struct et_opt options[] = {
	{ "json", 0, NULL,
	  "JSON: one object per PID (a list when several), with\n"
	  "pid, command, text_bytes, huge_bytes, huge_by_kind\n"
	  "and objects (path, kind, text_bytes, huge_bytes,\n"
	  "huge_by_kind, copied_text_bytes, mappings); sizes in\n"
	  "bytes; with --all, an object of processes (that\n"
	  "list) and total (processes, text_bytes, huge_bytes,\n"
	  "huge_by_kind, copied_text_bytes), and the processes\n"
	  "that could not be read named on stderr",
	  O_JSON, 0, 1, 0, NULL, 0 },
	{ "prometheus", 0, NULL,
	  "Prometheus text format 0.0.4, for node_exporter's\n"
	  "textfile collector: per process (labels pid, comm)\n"
	  "and per object of at least one huge page of text\n"
	  "(labels pid, comm, object: its path) text, copied and\n"
	  "huge bytes (label kind), and the host's THP modes,\n"
	  "hugetlb pools and /proc/vmstat huge-page counters;\n"
	  "the total of the processes read (enormoustext_total_*)\n"
	  "(names and meanings: each family's # HELP line);\n"
	  "processes that cannot be read are counted in\n"
	  "enormoustext_processes_unreadable and named on\n"
	  "stderr only when given as PIDs",
	  O_PROMETHEUS, 0, 1, 0, NULL, 0 },
	{ "summary", 's', NULL,
	  "one line per process; with --json, each process\n"
	  "without its objects (pid, command, text_bytes,\n"
	  "huge_bytes, huge_by_kind); with --prometheus, no\n"
	  "per-object metrics",
	  O_SUMMARY, 0, 0, 0, NULL, 0 },
	{ "output", 'o', "FILE",
	  "write FILE instead of standard output: beside it and\n"
	  "renamed in (a reader never sees half of it; a bad\n"
	  "FILE is refused before any process is read); a new\n"
	  "FILE is 0644 less the umask, for node_exporter\n"
	  "(another user) to read",
	  O_OUTPUT, ET_OPTF_SHORT, 0, 0, NULL, ET_COMP_FILE },
	{ "proc", 0, "DIR",
	  "read DIR/PID/smaps and DIR/PID/comm (and, with\n"
	  "--prometheus, DIR/vmstat) instead of /proc (a copy)",
	  O_PROC, 0, 0, 0, NULL, ET_COMP_DIR },
	{ "all", 'a', NULL,
	  "every process that can be read (not this one;\n"
	  "processes without text, such as kernel threads, are\n"
	  "left out; those that cannot be read are named, by\n"
	  "PID, in one line on stderr); the most huge text\n"
	  "first (then the most text, then by PID), and then\n"
	  "their total",
	  O_ALL, ET_OPTF_REQUIRED, 0, 2, NULL, 0 },
	{ NULL, 0, NULL, NULL, 0, 0, 0, 0, NULL, 0 },
};

static const struct et_cmd_spec spec = {
	.name = "stat",
	.forms = { { NULL, "PID..." }, { NULL, NULL } },
	.about =
	        "How much of each process's text (its executable mappings) is on huge pages,\n"
	        "per mapped object, split by kind, from /proc/PID/smaps:\n"
	        "  anon     AnonHugePages   anonymous copies (libenormoustext's thp and collapse)\n"
	        "  file     FilePmdMapped   the file mapped huge from the page cache\n"
	        "  shmem    ShmemPmdMapped  shmem/tmpfs huge pages\n"
	        "  hugetlb  *_Hugetlb       the hugetlb pool (libenormoustext's hugetlb)\n"
	        "An anonymous executable mapping inside the range of an executable segment of\n"
	        "a mapped ELF file (read from its program headers at its load address) is that\n"
	        "file's text moved by the library and counts for it (\"anonymous copies\");\n"
	        "where the file cannot be read, one between two mappings of the same file.\n"
	        "Other anonymous executable memory (and a memfd's) is JIT code, kind jit,\n"
	        "listed as [anonymous] (or the memfd's name).  --all lists the processes with\n"
	        "the most huge text first and ends with their total.  A kernel thread has no\n"
	        "text of its own: given as a PID, it is an error that says so.\n",
	.sections = { { NULL, options } },
	.tail = "Exit status: 0; 1 when a PID does not exist, cannot be read or is a kernel\n"
	        "thread (the others are still shown), or FILE cannot be written; 2 usage error.\n",
	.operand = ET_COMP_PID,
};

const struct et_cmd_spec *et_cmd_stat_spec(void)
{
	return &spec;
}

int et_cmd_stat(int argc, char **argv)
{
	struct stat_opts o = { .proc = "/proc" };
	struct et_args a;
	et_args_init(&a, &spec, argc, argv);
	int c;
	while ((c = et_args_next(&a)) > 0) {
		switch (c) {
		case O_JSON: o.json = true; break;
		case O_PROMETHEUS: o.prometheus = true; break;
		case O_SUMMARY: o.summary = true; break;
		case O_ALL: o.all = true; break;
		case O_OUTPUT: o.output = a.val; break;
		case O_PROC: o.proc = a.val; break;
		}
	}
	if (c < 0)
		return et_args_exit(c);
	int npids = a.nops;
	if (o.all && npids)
		return et_tool_usage("give PIDs or --all, not both");
	if (!o.all && !npids)
		return et_tool_usage("no PID given (or --all for every process)");
	long *pids = NULL;
	size_t n = 0;
	if (o.all) {
		if (!proc_dir_ok(o.proc))
			return ET_EXIT_BAD;
	} else {
		pids = calloc((size_t)npids, sizeof *pids);
		if (!pids) {
			et_tool_err("out of memory");
			return ET_EXIT_BAD;
		}
		for (int i = 0; i < npids; i++)
			if (et_tool_parse_pid(a.ops[i], &pids[n++])) {
				free(pids);
				return et_tool_usage("'%s' is not a process id", a.ops[i]);
			}
		if (!proc_dir_ok(o.proc)) {
			free(pids);
			return ET_EXIT_BAD;
		}
	}
	/* The output before any process is read: a bad -o is refused with
	 * nothing done, and what is written lands whole or not at all. */
	struct et_tool_out t;
	FILE *out = stdout;
	if (o.output) {
		out = et_tool_out_open_flags(&t, o.output, ET_OUT_READABLE);
		if (!out) {
			free(pids);
			return ET_EXIT_BAD;
		}
	}
	if (o.all) {
		pids = list_pids(o.proc, &n);
		if (!pids) {
			et_tool_err("cannot list %s: %s", o.proc, strerror(errno));
			if (o.output)
				et_tool_out_abort(&t);
			return ET_EXIT_BAD;
		}
	}

	bool list = o.all || n > 1;
	int rc = ET_EXIT_OK;
	size_t denied = 0;
	long self = getpid();
	bool real_proc = !strcmp(o.proc, "/proc");
	struct pset set = { .v = NULL };
	uint64_t H = 0;
	if (o.prometheus) {
		struct et_sysinfo si;
		et_sysinfo_read_pmd(&si, "");
		H = si.pmd_size;
	}
	for (size_t i = 0; i < n; i++) {
		if (o.all && real_proc && pids[i] == self)
			continue;
		struct et_smaps sm;
		struct sproc p;
		int err = read_proc(o.proc, pids[i], &sm, &p);
		if (err) {
			proc_free(&p);
			/* one that ended meanwhile is no process of --all's */
			if (o.prometheus && err != -ENOENT)
				set.unreadable++;
			if (!o.all) {
				report_error(o.proc, pids[i], err);
				rc = ET_EXIT_BAD;
			} else if (err == -EACCES || err == -EPERM) {
				pids[denied++] = pids[i];   /* (a slot already read) named at the end */
			}
			continue;
		}
		if (!o.all && p.nobjs == 0 && et_tool_refuse_kthread(o.proc, pids[i])) {
			rc = ET_EXIT_BAD;
			proc_free(&p);
			et_smaps_free(&sm);
			continue;
		}
		if (o.all && p.text == 0) {
			proc_free(&p);
			et_smaps_free(&sm);
			continue;
		}
		err = keep(&set, &p, o.prometheus, H);
		if (err) {
			et_tool_err("PID %ld: out of memory", p.pid);
			rc = ET_EXIT_BAD;
		}
		proc_free(&p);
		et_smaps_free(&sm);   /* object paths pointed into its pool */
	}
	if (o.all && set.n > 1)   /* the processes that matter first; PIDs as given */
		qsort(set.v, set.n, sizeof *set.v, cmp_huge);
	if (o.prometheus) {
		pm_write(out, &set, &o);
	} else if (o.json) {
		struct et_json j;
		et_json_init(&j, out);
		if (o.all) {
			et_json_obj(&j, NULL);
			et_json_arr(&j, "processes");
		} else if (list) {
			et_json_arr(&j, NULL);
		}
		for (size_t i = 0; i < set.n; i++)
			print_json(&j, &set.v[i], o.summary);
		if (list)
			et_json_arr_end(&j);
		if (o.all) {
			const struct sproc tot = set_total(&set);
			et_json_obj(&j, "total");
			et_json_u64(&j, "processes", set.n);
			et_json_u64(&j, "text_bytes", tot.text);
			et_json_u64(&j, "huge_bytes", proc_huge(&tot));
			kinds_json(&j, tot.anon, tot.file, tot.shmem, tot.hugetlb);
			et_json_u64(&j, "copied_text_bytes", tot.copied);
			et_json_obj_end(&j);
			et_json_obj_end(&j);
		}
		if (set.n || list)
			et_json_end(&j);
	} else {
		if (o.summary)
			print_summary_header(out);
		for (size_t i = 0; i < set.n; i++)
			print_text(out, &set.v[i], &o, i == 0);
		if (o.all) {
			const struct sproc tot = set_total(&set);
			print_total_text(out, &tot, set.n, o.summary);
		}
	}
	set_free(&set);
	if (o.output) {
		if (et_tool_out_close(&t))
			rc = ET_EXIT_BAD;
	} else {
		fflush(stdout);
	}
	/* with --prometheus, enormoustext_processes_unreadable says it */
	if (denied && !o.prometheus) {
		/* named, the first ones: a user's --all on a busy host can miss hundreds */
		char names[400];
		size_t k = 0, len = 0;
		names[0] = '\0';
		for (; k < denied && len + 12 < sizeof names - 40; k++)
			len += (size_t)snprintf(names + len, sizeof names - len, "%s%ld", k ? " " : "", pids[k]);
		if (k < denied)
			snprintf(names + len, sizeof names - len, " and %zu more", denied - k);
		et_tool_err("%zu process%s not shown: permission denied (%s): PID%s %s", denied,
		            et_tool_plural(denied, "es"), geteuid() ? "run as root to see them" : et_tool_denied_why(),
		            denied == 1 ? "" : "s", names);
	}
	free(pids);
	return rc;
}
