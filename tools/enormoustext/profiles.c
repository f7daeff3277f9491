/*
 * tools/enormoustext/profiles.c — profiles as the command reads and adds
 * them up (see profiles.h): loaded by core/profile.c's parser with one
 * line naming a bad file, windows of an object, the merge (`profile
 * merge`, `record`'s processes).
 *
 * Owns: et_tool_profile_load, et_tool_profile_windows,
 * et_tool_profile_merge(_to).
 * May call: core (profile: the parser, the merge, the writer), output.c
 * (the file written), common.c (the stdio sink), msg.c.
 * Never: reads or writes a profile line itself (core/profile.c does).
 */
#include "profiles.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int et_tool_profile_load(struct et_profile *p, const char *path)
{
	if (et_profile_load(p, path) != 0) {
		et_tool_err("%s: %s", path, p->err);
		return -1;
	}
	return 0;
}

size_t et_tool_profile_windows(const struct et_profile *p, const struct et_prof_obj *o, uint64_t W,
                               struct et_tool_win **out)
{
	struct et_tool_win *w = calloc(o->n ? o->n : 1, sizeof *w);
	size_t n = 0;
	if (!w) {
		et_tool_err("out of memory");
		exit(ET_EXIT_BAD);
	}
	for (uint32_t i = 0; i < o->n; i++) {
		const struct et_prof_ent *e = &p->ents[o->first + i];
		uint64_t s = e->vaddr & ~(W - 1);
		if (n && w[n - 1].start == s) {
			w[n - 1].samples += e->count;
		} else {
			w[n].start = s;
			w[n].samples = e->count;
			n++;
		}
	}
	*out = w;
	return n;
}

int et_tool_profile_merge(const char *out, char *const *files, size_t nfiles)
{
	return et_tool_profile_merge_to(NULL, out, files, nfiles);
}

int et_tool_profile_merge_to(struct et_tool_out *opened, const char *out, char *const *files, size_t nfiles)
{
	return et_tool_profile_merge_stats(opened, out, files, nfiles, NULL);
}

void et_tool_merge_stats_free(struct et_tool_merge_stats *st)
{
	free(st->inputs);
	st->inputs = NULL;
	st->n = 0;
}

/* The figures of the n profiles loaded (their sum: as et_profile_merge
 * adds them, one object per build-id). */
static void merge_stats(const struct et_profile *ps, size_t n, struct et_tool_merge_stats *st)
{
	*st = (struct et_tool_merge_stats){ .granule = n ? ps[0].granule : 0 };
	st->inputs = calloc(n ? n : 1, sizeof *st->inputs);
	if (!st->inputs) {
		et_tool_err("out of memory");
		exit(ET_EXIT_BAD);
	}
	st->n = n;
	for (size_t i = 0; i < n; i++) {
		st->inputs[i].objects = ps[i].nobjs;
		for (size_t k = 0; k < ps[i].nobjs; k++) {
			const struct et_prof_obj *o = &ps[i].objs[k];
			uint64_t s = st->inputs[i].samples + o->total;
			st->inputs[i].samples = s < o->total ? UINT64_MAX : s;
			s = st->samples + o->total;
			st->samples = s < o->total ? UINT64_MAX : s;
			/* a build-id counted once: at its first profile, first object */
			bool seen = false;
			for (size_t pi = 0; pi <= i && !seen; pi++)
				for (size_t q = 0; q < (pi == i ? k : ps[pi].nobjs) && !seen; q++)
					seen = !strcmp(ps[pi].objs[q].build_id, o->build_id);
			st->objects += !seen;
		}
	}
}

int et_tool_profile_merge_stats(struct et_tool_out *opened, const char *out, char *const *files, size_t nfiles,
                                struct et_tool_merge_stats *st)
{
	struct et_profile *ps = calloc(nfiles ? nfiles : 1, sizeof *ps);
	if (!ps) {
		et_tool_err("out of memory");
		if (opened)
			et_tool_out_abort(opened);
		return ET_EXIT_BAD;
	}
	int rc = ET_EXIT_BAD;
	size_t n = 0;
	for (; n < nfiles; n++) {
		if (et_tool_profile_load(&ps[n], files[n]) != 0)
			goto done;
		if (ps[n].granule != ps[0].granule) {
			et_tool_err("%s: granule %llu, the others have %llu: cannot merge", files[n],
			            (unsigned long long)ps[n].granule, (unsigned long long)ps[0].granule);
			n++;
			goto done;
		}
	}
	bool mine = !opened;    /* t is freed here (the caller's is the caller's) */
	struct et_tool_out *t = opened ? opened : malloc(sizeof *t);
	FILE *f = opened ? opened->f : t ? et_tool_out_open(t, out) : NULL;
	opened = NULL;          /* closed or aborted from here on */
	if (!f) {
		if (!t)
			et_tool_err("out of memory");
		goto done_out;
	}
	char comment[64];
	snprintf(comment, sizeof comment, "merged from %zu profile(s)", nfiles);
	struct et_sink sink;
	et_tool_sink_file(&sink, f);
	int e = et_profile_merge(ps, n, &sink, comment);
	if (e) {
		et_tool_err("%s: %s", out, e == -ENOMEM ? "out of memory" : strerror(-e));
		et_tool_out_abort(t);
	} else if (et_tool_out_close(t) == 0) {
		rc = ET_EXIT_OK;
		if (st)
			merge_stats(ps, n, st);
	}
done_out:
	if (mine)
		free(t);
done:
	if (opened)
		et_tool_out_abort(opened);
	for (size_t i = 0; i < n; i++)
		et_profile_free(&ps[i]);
	free(ps);
	return rc;
}
