/*
 * tools/enormoustext/stat.c — `enormoustext stat [--json] [--summary]
 * [--proc DIR] (--all | PID...)`: how much of each process's text is on huge
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
 * for a hugetlb copy), file r-xp...  An anonymous executable mapping is
 * credited to an object when the nearest file mappings before and after it
 * are both that object's (same path and inode): it lies inside the object's
 * own address range.  Anything else executable and anonymous (JIT code) is
 * listed as "[anonymous]"; [vdso] and the like under their own names.
 *
 * Owns: `stat`: per process and per object, how much text is huge and of
 * which kind, as text or JSON.
 * May call: core (smaps, json), common.c.
 * Never: changes the processes it looks at.
 */
#include "tool.h"

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
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
	uint64_t text, anon, file, shmem, hugetlb;
};

struct stat_opts {
	bool json, summary, all;
	const char *proc;
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

/* Index of the nearest file mapping from i in direction d, or -1. */
static long nearest_file(const struct et_smaps *sm, long i, long d)
{
	for (long j = i + d; j >= 0 && j < (long)sm->count; j += d)
		if (classify(et_vma_path(sm, &sm->vmas[j])) == V_FILE)
			return j;
	return -1;
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
		if (cls == V_ANON) {
			long a = nearest_file(sm, i, -1), b = nearest_file(sm, i, +1);
			const struct et_vma *va = a >= 0 ? &sm->vmas[a] : NULL;
			const struct et_vma *vb = b >= 0 ? &sm->vmas[b] : NULL;
			if (va && vb && va->inode == vb->inode &&
			    !strcmp(et_vma_path(sm, va), et_vma_path(sm, vb))) {
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

static void print_summary_header(void)
{
	printf("%8s %9s %9s %9s %9s %9s %9s  %s\n", "PID", "TEXT", "HUGE", "ANON", "FILE", "SHMEM",
	       "HUGETLB", "COMMAND");
}

static void print_text(const struct sproc *p, const struct stat_opts *o, bool first)
{
	char a[16], b[16], c[16], d[16], e[16], f[16];
	if (o->summary) {
		printf("%8ld %9s %9s %9s %9s %9s %9s  %s\n", p->pid, et_tool_size(a, sizeof a, p->text),
		       et_tool_size(b, sizeof b, proc_huge(p)), et_tool_size(c, sizeof c, p->anon),
		       et_tool_size(d, sizeof d, p->file), et_tool_size(e, sizeof e, p->shmem),
		       et_tool_size(f, sizeof f, p->hugetlb), p->comm);
		return;
	}
	if (!first)
		putchar('\n');
	uint64_t h = proc_huge(p);
	printf("PID %ld (%s): %s of text, %s on huge pages", p->pid, p->comm,
	       et_tool_size(a, sizeof a, p->text), et_tool_size(b, sizeof b, h));
	if (p->text)
		printf(" (%.0f%%)", 100.0 * (double)h / (double)p->text);
	printf(": anon %s, file %s, shmem %s, hugetlb %s\n", et_tool_size(c, sizeof c, p->anon),
	       et_tool_size(d, sizeof d, p->file), et_tool_size(e, sizeof e, p->shmem),
	       et_tool_size(f, sizeof f, p->hugetlb));
	if (!p->nobjs) {
		printf("  (no executable mappings)\n");
		return;
	}
	printf("%9s %9s %9s %9s %9s %9s  %s\n", "TEXT", "HUGE", "ANON", "FILE", "SHMEM", "HUGETLB",
	       "OBJECT");
	for (size_t i = 0; i < p->nobjs; i++) {
		const struct sobj *x = &p->objs[i];
		printf("%9s %9s %9s %9s %9s %9s  %s", et_tool_size(a, sizeof a, x->text),
		       et_tool_size(b, sizeof b, obj_huge(x)), et_tool_size(c, sizeof c, x->anon),
		       et_tool_size(d, sizeof d, x->file), et_tool_size(e, sizeof e, x->shmem),
		       et_tool_size(f, sizeof f, x->hugetlb), x->path);
		if (x->copied)
			printf(" (%s of it in anonymous copies)", et_tool_size(a, sizeof a, x->copied));
		putchar('\n');
	}
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
	static const char *cls_name[] = { "file", "pseudo", "anonymous" };
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

/* Whether this process has CAP_SYS_PTRACE in its effective set (what lets
 * root read another user's smaps), from /proc/self/status. */
static bool have_cap_sys_ptrace(void)
{
	char line[256];
	bool cap = false;
	FILE *f = fopen("/proc/self/status", "r");
	while (f && fgets(line, sizeof line, f)) {
		unsigned long long eff;
		if (sscanf(line, "CapEff: %llx", &eff) == 1) {
			cap = (eff >> 19) & 1;          /* CAP_SYS_PTRACE */
			break;
		}
	}
	if (f)
		fclose(f);
	return cap;
}

/* Why smaps could not be read, after "permission denied": a user is told
 * to be root or the owner; root is told what refused it, since being root
 * was not enough. */
static const char *denied_why(void)
{
	if (geteuid() != 0)
		return "the process belongs to another user: run as root or as its owner";
	if (!have_cap_sys_ptrace())
		return "root without CAP_SYS_PTRACE, as in a container, reads only its own user's "
		       "processes: run with CAP_SYS_PTRACE or as the process's owner";
	return "refused even to root with CAP_SYS_PTRACE: the kernel's ptrace access check "
	       "(a security module such as SELinux or AppArmor, Yama's kernel.yama.ptrace_scope) "
	       "or hidepid= on the proc mount";
}

static void report_error(const char *proc, long pid, int err)
{
	if (err == -ENOENT)
		et_tool_err("PID %ld: no such process", pid);
	else if (err == -EACCES || err == -EPERM)
		et_tool_err("PID %ld: permission denied reading %s/%ld/smaps (%s)", pid, proc, pid,
		            denied_why());
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

static void help(FILE *f)
{
	fprintf(f,
	        "usage: enormoustext stat [--json] [--summary] [--proc DIR] PID...\n"
	        "       enormoustext stat [--json] [--summary] [--proc DIR] --all\n"
	        "\n"
	        "How much of each process's text (its executable mappings) is on huge pages,\n"
	        "per mapped object, split by kind, from /proc/PID/smaps:\n"
	        "  anon     AnonHugePages   anonymous copies (libenormoustext's thp and collapse)\n"
	        "  file     FilePmdMapped   the file mapped huge from the page cache\n"
	        "  shmem    ShmemPmdMapped  shmem/tmpfs huge pages\n"
	        "  hugetlb  *_Hugetlb       the hugetlb pool (libenormoustext's hugetlb)\n"
	        "An anonymous executable mapping lying between two mappings of the same file\n"
	        "is that file's text moved by the library and counts for it (\"anonymous\n"
	        "copies\"); other anonymous executable memory is listed as [anonymous].\n"
	        "\n"
	        "options:\n"
	        "  --json        JSON: one object per PID (a list when several, or with --all),\n"
	        "                with pid, command, text_bytes, huge_bytes, huge_by_kind and\n"
	        "                objects (path, kind, text_bytes, huge_bytes, huge_by_kind,\n"
	        "                copied_text_bytes, mappings); sizes in bytes\n"
	        "  -s, --summary one line per process; with --json, each process without\n"
	        "                its objects (pid, command, text_bytes, huge_bytes,\n"
	        "                huge_by_kind)\n"
	        "  -a, --all     every process that can be read (not this one; processes\n"
	        "                without text, such as kernel threads, are left out; those that\n"
	        "                cannot be read are counted in one line on stderr)\n"
	        "  --proc DIR    read DIR/PID/smaps and DIR/PID/comm instead of /proc (a copy)\n"
	        "  -h, --help    this help\n"
	        "\n"
	        "Exit status: 0; 1 when a PID does not exist or cannot be read (the others are\n"
	        "still shown); 2 usage error.\n");
}

int et_cmd_stat(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "summary", no_argument, NULL, 's' },
		{ "all", no_argument, NULL, 'a' },
		{ "proc", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct stat_opts o = { .proc = "/proc" };
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, ":sah", lo, NULL)) != -1) {
		switch (c) {
		case 'j': o.json = true; break;
		case 's': o.summary = true; break;
		case 'a': o.all = true; break;
		case 'p': o.proc = optarg; break;
		case 'h': help(stdout); return ET_EXIT_OK;
		default: return et_tool_bad_option(c, argv, optind);
		}
	}
	int npids = argc - optind;
	if (o.all && npids)
		return et_tool_usage("give PIDs or --all, not both");
	if (!o.all && !npids)
		return et_tool_usage("no PID given (or --all for every process)");
	long *pids = NULL;
	size_t n = 0;
	if (o.all) {
		if (!proc_dir_ok(o.proc))
			return ET_EXIT_BAD;
		pids = list_pids(o.proc, &n);
		if (!pids) {
			et_tool_err("cannot list %s: %s", o.proc, strerror(errno));
			return ET_EXIT_BAD;
		}
	} else {
		pids = calloc((size_t)npids, sizeof *pids);
		if (!pids) {
			et_tool_err("out of memory");
			return ET_EXIT_BAD;
		}
		for (int i = 0; i < npids; i++)
			if (et_tool_parse_pid(argv[optind + i], &pids[n++])) {
				free(pids);
				return et_tool_usage("'%s' is not a process id", argv[optind + i]);
			}
		if (!proc_dir_ok(o.proc)) {
			free(pids);
			return ET_EXIT_BAD;
		}
	}

	bool list = o.all || n > 1, first = true;
	int rc = ET_EXIT_OK;
	size_t denied = 0;
	long self = getpid();
	bool real_proc = !strcmp(o.proc, "/proc");
	struct et_json j;
	et_json_init(&j, stdout);
	if (o.json && list)
		et_json_arr(&j, NULL);
	if (!o.json && o.summary)
		print_summary_header();
	for (size_t i = 0; i < n; i++) {
		if (o.all && real_proc && pids[i] == self)
			continue;
		struct et_smaps sm;
		struct sproc p;
		int err = read_proc(o.proc, pids[i], &sm, &p);
		if (err) {
			proc_free(&p);
			if (!o.all) {
				report_error(o.proc, pids[i], err);
				rc = ET_EXIT_BAD;
			} else if (err == -EACCES || err == -EPERM) {
				denied++;
			}
			continue;
		}
		if (o.all && p.text == 0) {
			proc_free(&p);
			et_smaps_free(&sm);
			continue;
		}
		if (o.json)
			print_json(&j, &p, o.summary);
		else
			print_text(&p, &o, first);
		first = false;
		proc_free(&p);
		et_smaps_free(&sm);   /* object paths point into its pool */
	}
	if (o.json) {
		if (list)
			et_json_arr_end(&j);
		if (!first || list)
			et_json_end(&j);
	}
	fflush(stdout);
	if (denied)
		et_tool_err("%zu process%s not shown: permission denied (%s)", denied,
		            et_tool_plural(denied, "es"), geteuid() ? "run as root to see them" : denied_why());
	free(pids);
	return rc;
}
