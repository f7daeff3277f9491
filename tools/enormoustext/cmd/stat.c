/*
 * tools/enormoustext/cmd/stat.c — `enormoustext stat PID...` or `stat --all`
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
 * The command as parse -> act -> print: this file parses the command line
 * and reads the processes (the act: nothing is changed), stat_print.c
 * writes what was read.
 *
 * Owns: `stat`: its options, which processes are read (--all's list from
 * /proc), per process and per object how much text is huge and of which
 * kind (the attribution above), the processes that could not be read.
 * May call: stat_print.c (the output), core (smaps, sysinfo), common.c,
 * output.c (-o), opts.c, msg.c.
 * Never: changes the processes it looks at.
 */
#include "stat.h"
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
	.sections = { { NULL, options, NULL } },
	.tail = "Exit status: 0; 1 when a PID does not exist, cannot be read or is a kernel\n"
	        "thread (the others are still shown), or FILE cannot be written; 2 usage error.\n",
	.operand = ET_COMP_PID,
};

const struct et_cmd_spec *et_cmd_stat_spec(void)
{
	return &spec;
}


/* The command line into o and the PIDs given into *pids (*n of them; the
 * caller frees *pids).  false: stop with *rc. */
static bool parse(int argc, char **argv, struct stat_opts *o, long **pids, size_t *n, int *rc)
{
	struct et_args a;
	et_args_init(&a, &spec, argc, argv);
	int c;
	while ((c = et_args_next(&a)) > 0) {
		switch (c) {
		case O_JSON: o->json = true; break;
		case O_PROMETHEUS: o->prometheus = true; break;
		case O_SUMMARY: o->summary = true; break;
		case O_ALL: o->all = true; break;
		case O_OUTPUT: o->output = a.val; break;
		case O_PROC: o->proc = a.val; break;
		}
	}
	*rc = ET_EXIT_BAD;
	if (c < 0) {
		*rc = et_args_exit(c);
		return false;
	}
	int npids = a.nops;
	if (o->all && npids) {
		*rc = et_tool_usage("give PIDs or --all, not both");
		return false;
	}
	if (!o->all && !npids) {
		*rc = et_tool_usage("no PID given (or --all for every process)");
		return false;
	}
	if (o->all)
		return proc_dir_ok(o->proc);
	*pids = calloc((size_t)npids, sizeof **pids);
	if (!*pids) {
		et_tool_err("out of memory");
		return false;
	}
	for (int i = 0; i < npids; i++)
		if (et_tool_parse_pid(a.ops[i], &(*pids)[(*n)++])) {
			*rc = et_tool_usage("'%s' is not a process id", a.ops[i]);
			return false;
		}
	return proc_dir_ok(o->proc);
}

/* Read each of the n processes of pids into set (with --all, those with
 * text; this command itself left out).  The ones --all could not read for
 * want of permission are moved to the front of pids (*denied of them), to
 * be named at the end.  ET_EXIT_OK, or ET_EXIT_BAD after a line for each
 * failure. */
static int read_all(const struct stat_opts *o, long *pids, size_t n, struct pset *set, size_t *denied)
{
	int rc = ET_EXIT_OK;
	long self = getpid();
	bool real_proc = !strcmp(o->proc, "/proc");
	uint64_t H = 0;
	if (o->prometheus) {
		struct et_sysinfo si;
		et_sysinfo_read_pmd(&si, "");
		H = si.pmd_size;
	}
	for (size_t i = 0; i < n; i++) {
		if (o->all && real_proc && pids[i] == self)
			continue;
		struct et_smaps sm;
		struct sproc p;
		int err = read_proc(o->proc, pids[i], &sm, &p);
		if (err) {
			proc_free(&p);
			/* one that ended meanwhile is no process of --all's */
			if (o->prometheus && err != -ENOENT)
				set->unreadable++;
			if (!o->all) {
				report_error(o->proc, pids[i], err);
				rc = ET_EXIT_BAD;
			} else if (err == -EACCES || err == -EPERM) {
				pids[(*denied)++] = pids[i];   /* (a slot already read) named at the end */
			}
			continue;
		}
		if (!o->all && p.nobjs == 0 && et_tool_refuse_kthread(o->proc, pids[i])) {
			rc = ET_EXIT_BAD;
			proc_free(&p);
			et_smaps_free(&sm);
			continue;
		}
		if (o->all && p.text == 0) {
			proc_free(&p);
			et_smaps_free(&sm);
			continue;
		}
		err = keep(set, &p, o->prometheus, H);
		if (err) {
			et_tool_err("PID %ld: out of memory", p.pid);
			rc = ET_EXIT_BAD;
		}
		proc_free(&p);
		et_smaps_free(&sm);   /* object paths pointed into its pool */
	}
	return rc;
}

/* The processes --all could not read for want of permission, the first
 * ones named: a user's --all on a busy host can miss hundreds. */
static void say_denied(const long *pids, size_t denied)
{
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

int et_cmd_stat(int argc, char **argv)
{
	struct stat_opts o = { .proc = "/proc" };
	long *pids = NULL;
	size_t n = 0;
	int rc;
	if (!parse(argc, argv, &o, &pids, &n, &rc)) {
		free(pids);
		return rc;
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
	struct pset set = { .v = NULL };
	size_t denied = 0;
	rc = read_all(&o, pids, n, &set, &denied);
	et_stat_print(out, &set, &o, list);
	set_free(&set);
	if (o.output) {
		if (et_tool_out_close(&t))
			rc = ET_EXIT_BAD;
	} else {
		fflush(stdout);
	}
	/* with --prometheus, enormoustext_processes_unreadable says it */
	if (denied && !o.prometheus)
		say_denied(pids, denied);
	free(pids);
	return rc;
}
