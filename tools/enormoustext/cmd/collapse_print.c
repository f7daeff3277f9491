/*
 * tools/enormoustext/cmd/collapse_print.c — what `enormoustext collapse` says
 * of each round (collapse.c drives the rounds, collapse_act.c acts): per
 * process a table of its executable mappings (asked, huge before and
 * after, what each is) and one line of totals, or one JSON object; a
 * window that stayed small named with the reason its errno gives (see
 * why_small); with --watch after the first round only what is new or
 * changed.
 *
 * Owns: collapse's output, text and JSON, and the words for each errno of
 * process_madvise(MADV_COLLAPSE).
 * May call: core (json), collapse_act.c (et_collapse_range_small), msg.c,
 * common.c.
 * Never: changes what was found (only each range's `printed`, the huge
 * bytes last shown); writes to stderr.
 */
#include "collapse.h"

#include <errno.h>
#include <string.h>

/* ------------------------------------------------------------ reasons */

static const char *errno_name(int e)
{
	switch (e) {
	case 0: return NULL;
	case EPERM: return "EPERM";
	case EACCES: return "EACCES";
	case ESRCH: return "ESRCH";
	case EINVAL: return "EINVAL";
	case EAGAIN: return "EAGAIN";
	case ENOMEM: return "ENOMEM";
	case EBUSY: return "EBUSY";
	case ENOSYS: return "ENOSYS";
	case EFAULT: return "EFAULT";
	default: return "other";
	}
}

/* Why a window stayed small after process_madvise failed with e. */
static const char *why_small(const struct copts *o, const struct cproc *p, const struct crange *r, int e)
{
	switch (e) {
	case EPERM:
		return "EPERM: collapsing another process's memory needs CAP_SYS_NICE";
	case EACCES:
		return "EACCES: no ptrace read access to the process";
	case ESRCH:
		return "ESRCH: the process exited";
	case ENOSYS:
		return "ENOSYS: this kernel has no process_madvise (Linux 5.10)";
	case EAGAIN:
		return "EAGAIN: pages busy or no huge page free just now (try again)";
	case ENOMEM:
		return "ENOMEM: no free huge page could be allocated (memory fragmented or short)";
	case EBUSY:
		return "EBUSY: the memory cgroup could not be charged for the huge page";
	case EINVAL:
		if (o->old_kernel)
			return "EINVAL: process_madvise takes MADV_COLLAPSE from Linux 6.1 on";
		if (p->thp_disabled)
			return "EINVAL: THP is disabled for this process (PR_SET_THP_DISABLE)";
		if (r->kind == K_FILE)
			return "EINVAL: this kernel cannot collapse file-backed text (that needs "
			       "CONFIG_READ_ONLY_THP_FOR_FS); where the page cache holds a window as one huge "
			       "folio it is mapped huge when first executed: `enormoustext prime FILE` before "
			       "the program starts gives zero-copy huge text";
		return "EINVAL: nothing there yet (a part never touched: the kernel collapses only "
		       "pages that exist), or the mapping refuses huge pages (MADV_NOHUGEPAGE)";
	case 0:
		return "the kernel said it collapsed, but smaps shows it small";
	default:
		return "process_madvise failed";
	}
}

/* ------------------------------------------------------------ reporting */

static const char *kind_name(enum rkind k)
{
	return k == K_FILE ? "file" : "anon";
}

static void range_text(const struct crange *r, const struct cproc *p, const struct copts *o)
{
	char a[16], b[16], c[16];
	if (r->left_out) {
		printf("  %012llx-%012llx %4s %8s %8s    %-8s %s\n", (unsigned long long)r->start,
		       (unsigned long long)r->end, kind_name(r->kind), "-", et_tool_size(b, sizeof b, r->before),
		       "", r->what);
		printf("      left out: %s\n", r->left_out);
		return;
	}
	printf("  %012llx-%012llx %4s %8s %8s -> %-8s %s\n", (unsigned long long)r->start,
	       (unsigned long long)r->end, kind_name(r->kind), et_tool_size(a, sizeof a, r->asked),
	       et_tool_size(b, sizeof b, r->before),
	       o->dry ? "(dry)" : et_tool_size(c, sizeof c, r->after), r->what);
	if (r->nasked < r->nwin)
		printf("      %u of %u windows hot in the profile\n", r->nasked, r->nwin);
	if (!o->dry && et_collapse_range_small(r))
		printf("      stayed small (%u of %u windows failed): %s\n", r->nfailed, r->nasked,
		       why_small(o, p, r, r->err));
}

static void range_json(struct et_json *j, const struct crange *r, const struct cproc *p,
                       const struct copts *o)
{
	et_json_obj(j, NULL);
	et_json_hex(j, "start", r->start);
	et_json_hex(j, "end", r->end);
	et_json_str(j, "kind", kind_name(r->kind));
	et_json_str(j, "what", r->what);
	et_json_u64(j, "windows", r->nwin);
	et_json_u64(j, "windows_asked", r->left_out ? 0 : r->nasked);
	et_json_u64(j, "asked_bytes", r->left_out ? 0 : r->asked);
	et_json_u64(j, "huge_before", r->before);
	if (o->dry)
		et_json_null(j, "huge_after");
	else
		et_json_u64(j, "huge_after", r->after);
	et_json_bool(j, "huge", !r->left_out && !o->dry && r->after >= r->asked);
	if (r->left_out || o->dry || !et_collapse_range_small(r)) {
		et_json_null(j, "errno");
		if (r->left_out)
			et_json_str(j, "reason", r->left_out);
		else
			et_json_null(j, "reason");
	} else {
		et_json_str(j, "errno", errno_name(r->err));
		et_json_str(j, "reason", why_small(o, p, r, r->err));
	}
	et_json_obj_end(j);
}

/* Should r be shown this round?  Once: everything with a window; --watch
 * after its first round: what is new or changed. */
static bool shown(const struct crange *r, bool watching)
{
	if (!r->lo && !r->hi)
		return false;           /* no whole window: only counted */
	if (!watching)
		return true;
	return r->fresh || r->after != r->printed;
}

struct totals {
	uint64_t asked, before, after;
	unsigned asked_maps, small, left, tiny;
};

static void proc_totals(const struct cproc *p, const struct copts *o, struct totals *t)
{
	memset(t, 0, sizeof *t);
	for (size_t i = 0; i < p->n; i++) {
		const struct crange *r = &p->r[i];
		if (!r->lo && !r->hi) {
			t->tiny++;
			continue;
		}
		if (r->left_out) {
			t->left++;
			continue;
		}
		t->asked_maps++;
		t->asked += r->asked;
		t->before += r->before < r->asked ? r->before : r->asked;
		t->after += r->after < r->asked ? r->after : r->asked;
		t->small += !o->dry && et_collapse_range_small(r);
	}
}

static void proc_text(struct cproc *p, const struct copts *o, bool watching)
{
	char a[16], b[16], c[16];
	bool header = false;
	for (size_t i = 0; i < p->n; i++) {
		struct crange *r = &p->r[i];
		if (!shown(r, watching))
			continue;
		if (!header) {
			if (!watching)
				printf("PID %ld (%s): executable mappings, huge page size %s\n", p->pid, p->comm,
				       et_tool_size(a, sizeof a, o->H));
			printf("  %-25s %4s %8s %8s    %-8s %s\n", "RANGE", "KIND", "ASKED", "HUGE", "AFTER",
			       "WHAT");
			header = true;
		}
		range_text(r, p, o);
		r->printed = r->after;
	}
	if (watching && !header)
		return;
	struct totals t;
	proc_totals(p, o, &t);
	if (o->dry) {
		printf("PID %ld (%s): would ask %s in %u mapping(s) (%s of it huge now); nothing changed "
		       "(--dry-run)", p->pid, p->comm, et_tool_size(a, sizeof a, t.asked), t.asked_maps,
		       et_tool_size(b, sizeof b, t.before));
	} else {
		printf("PID %ld (%s): %s asked in %u mapping(s): huge %s before, %s after", p->pid, p->comm,
		       et_tool_size(a, sizeof a, t.asked), t.asked_maps, et_tool_size(b, sizeof b, t.before),
		       et_tool_size(c, sizeof c, t.after));
		if (!t.asked_maps)
			printf(": nothing to collapse");
		else if (!t.small)
			printf(": all huge");
		else {
			printf(": %u mapping(s) stayed small:", t.small);
			for (size_t i = 0; i < p->n; i++)
				if (et_collapse_range_small(&p->r[i]))
					printf(" %llx-%llx (%s)", (unsigned long long)p->r[i].start,
					       (unsigned long long)p->r[i].end, errno_name(p->r[i].err) ?
					       errno_name(p->r[i].err) : "not huge");
		}
	}
	if (t.left)
		printf("; %u mapping(s) left out (reasons above)", t.left);
	if (t.tiny)
		printf("; %u without a whole %s window", t.tiny, et_tool_size(a, sizeof a, o->H));
	putchar('\n');
}

static void proc_json(struct et_json *j, struct cproc *p, const struct copts *o, bool watching)
{
	struct totals t;
	proc_totals(p, o, &t);
	et_json_obj(j, NULL);
	et_json_i64(j, "pid", p->pid);
	et_json_str(j, "command", p->comm);
	if (p->gone)
		et_json_str(j, "error", "exited");
	else if (p->fatal && p->fatal != ESRCH)
		et_json_str(j, "error", p->fatal == EPERM ? "EPERM: needs CAP_SYS_NICE" :
		            p->fatal == EACCES ? "EACCES: needs ptrace read access" : errno_name(p->fatal));
	else if (p->denied)
		et_json_str(j, "error", "EACCES: cannot read its smaps (needs ptrace read access)");
	else
		et_json_null(j, "error");
	et_json_u64(j, "asked_bytes", t.asked);
	et_json_u64(j, "huge_before", t.before);
	if (o->dry)
		et_json_null(j, "huge_after");
	else
		et_json_u64(j, "huge_after", t.after);
	et_json_u64(j, "stayed_small", t.small);
	et_json_u64(j, "no_window", t.tiny);
	et_json_arr(j, "ranges");
	for (size_t i = 0; i < p->n; i++) {
		struct crange *r = &p->r[i];
		if (!shown(r, watching))
			continue;
		range_json(j, r, p, o);
		r->printed = r->after;
	}
	et_json_arr_end(j);
	et_json_obj_end(j);
}

static void json_head(struct et_json *j, const struct copts *o, unsigned round)
{
	et_json_init(j, stdout);
	if (o->watch > 0)
		et_json_obj_flat(j, NULL);
	else
		et_json_obj(j, NULL);
	et_json_u64(j, "pmd_size", o->H);
	et_json_bool(j, "dry_run", o->dry);
	et_json_bool(j, "jit", o->jit);
	et_json_str(j, "profile", o->profile_path);
	if (o->watch > 0)
		et_json_u64(j, "round", round);
	et_json_arr(j, "processes");
}

void et_collapse_report(struct cproc *ps, size_t n, const struct copts *o, unsigned round)
{
	bool watching = round > 0;
	if (!o->json) {
		for (size_t i = 0; i < n; i++)
			if (!ps[i].denied && (!ps[i].gone || (!watching && ps[i].n)))
				proc_text(&ps[i], o, watching);
		fflush(stdout);
		return;
	}
	bool changed = !watching;
	for (size_t i = 0; i < n && !changed; i++) {
		changed = ps[i].gone && !ps[i].said_gone;
		for (size_t k = 0; k < ps[i].n && !changed; k++)
			changed = shown(&ps[i].r[k], true);
	}
	if (!changed)
		return;
	struct et_json j;
	json_head(&j, o, round);
	for (size_t i = 0; i < n; i++) {
		if (watching && (ps[i].denied || ps[i].said_gone))
			continue;
		proc_json(&j, &ps[i], o, watching);
		ps[i].said_gone = ps[i].gone;
	}
	et_json_arr_end(&j);
	et_json_obj_end(&j);
	et_json_end(&j);
	fflush(stdout);
}
