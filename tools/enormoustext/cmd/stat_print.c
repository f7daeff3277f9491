/*
 * tools/enormoustext/cmd/stat_print.c — what `enormoustext stat` says of the
 * processes stat.c read: per process and per object, text and huge bytes
 * by kind, as lines (or --summary's one line a process), JSON, or
 * --prometheus's metrics (the text exposition format, prom.c) with the
 * host's THP modes, hugetlb pools and vmstat counters of huge pages; --all
 * sorted by huge bytes and ended with the total.
 *
 * Owns: stat's output in its three forms, the metrics' names and help, and
 * --all's order.
 * May call: core (json, sysinfo), prom.c, common.c, msg.c.
 * Never: reads a process (stat.c does); changes what was read.
 */
#include "stat.h"
#include "host.h"

#include <stdlib.h>
#include <string.h>

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

static const char *const kind_name[4] = { "anon", "file", "shmem", "hugetlb" };

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

	/* the daemon (cmd/daemon.c), from its state */
	struct et_tool_daemon d;
	et_tool_daemon_read("/", &d);
	et_prom_family(f, "enormoustext_daemon_up", "gauge",
	               "1 when enormoustext daemon runs (its pid in " ET_TOOL_DAEMON_STATE "/daemon.json is alive), "
	               "else 0");
	et_prom_sample(f, "enormoustext_daemon_up", NULL, 0, d.running);
	et_prom_family(f, "enormoustext_daemon_files", "gauge",
	               "Files enormoustext daemon knows, by the state label (primed, pending, nothing_to_prime, "
	               "gave_up), from its last state");
	static const char *const states[] = { "primed", "pending", "nothing_to_prime", "gave_up" };
	const unsigned long counts[] = { d.primed, d.pending, d.nothing, d.gave_up };
	for (size_t i = 0; d.known && i < 4; i++) {
		l[0] = (struct et_prom_label){ "state", states[i] };
		et_prom_sample(f, "enormoustext_daemon_files", l, 1, counts[i]);
	}

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


/* (stat.h) */
void et_stat_print(FILE *out, struct pset *set, const struct stat_opts *o, bool list)
{
	if (o->all && set->n > 1)   /* the processes that matter first; PIDs as given */
		qsort(set->v, set->n, sizeof *set->v, cmp_huge);
	if (o->prometheus) {
		pm_write(out, set, o);
	} else if (o->json) {
		struct et_json j;
		et_json_init(&j, out);
		if (o->all) {
			et_json_obj(&j, NULL);
			et_json_arr(&j, "processes");
		} else if (list) {
			et_json_arr(&j, NULL);
		}
		for (size_t i = 0; i < set->n; i++)
			print_json(&j, &set->v[i], o->summary);
		if (list)
			et_json_arr_end(&j);
		if (o->all) {
			const struct sproc tot = set_total(set);
			et_json_obj(&j, "total");
			et_json_u64(&j, "processes", set->n);
			et_json_u64(&j, "text_bytes", tot.text);
			et_json_u64(&j, "huge_bytes", proc_huge(&tot));
			kinds_json(&j, tot.anon, tot.file, tot.shmem, tot.hugetlb);
			et_json_u64(&j, "copied_text_bytes", tot.copied);
			et_json_obj_end(&j);
			et_json_obj_end(&j);
		}
		if (set->n || list)
			et_json_end(&j);
	} else {
		if (o->summary)
			print_summary_header(out);
		for (size_t i = 0; i < set->n; i++)
			print_text(out, &set->v[i], o, i == 0);
		if (o->all) {
			const struct sproc tot = set_total(set);
			print_total_text(out, &tot, set->n, o->summary);
		}
	}
}
