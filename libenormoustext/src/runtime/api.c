/*
 * runtime/api.c — the public API (include/enormoustext.h).
 *
 * Owns: the entry points' contracts — arguments checked, errno left as it
 * was, a struct's `size` honoured both ways — and the translation of the
 * object table into the public structures.
 * May call: runtime/pass (a snapshot of the table, refresh, range),
 * runtime/report (the figures), runtime/other (another copy's answers).
 * Never: reaches into a stage's internals or the lock: it reads the table
 * only inside et_pass_read.
 */
#include "enormoustext.h"

#include "core/util.h"
#include "runtime/other.h"
#include "runtime/pass.h"
#include "runtime/report.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* Linked from libenormoustext.a, a program that calls the API pulls this
 * object out of the archive; this reference pulls in the constructor's
 * (init.c), which nothing else names. */
ET_HIDDEN extern const char et_init_linked;
__attribute__((used)) static const char *const et_pull_init = &et_init_linked;

/* Every entry point leaves errno as it found it (a pass opens files,
 * maps memory, may try a path that is not there). */
static void restore_errno(int *saved)
{
	errno = *saved;
}
#define ET_KEEP_ERRNO __attribute__((cleanup(restore_errno), unused)) int et_saved_errno_ = errno

static void stats_read(const struct et_run *run, void *arg)
{
	et_report_stats(run, arg);
}

int enormoustext_get_stats(struct enormoustext_stats *out)
{
	ET_KEEP_ERRNO;
	if (!out || out->size < offsetof(struct enormoustext_stats, elapsed_ns))
		return -EINVAL;
	if (et_other.stats)
		return et_other.stats(out);
	struct enormoustext_stats st;
	memset(&st, 0, sizeof st);
	st.size = out->size < sizeof st ? out->size : (uint32_t)sizeof st;
	et_pass_read(stats_read, &st);
	memcpy(out, &st, st.size);
	return 0;
}

static void count_read(const struct et_run *run, void *arg)
{
	*(int *)arg = (int)run->nobjs;
}

int enormoustext_object_count(void)
{
	ET_KEEP_ERRNO;
	if (et_other.count)
		return et_other.count();
	int n = 0;
	et_pass_read(count_read, &n);
	return n;
}

static void object_to_public(const struct et_object *o, struct enormoustext_object *x)
{
	x->windows = o->nwindows;
	x->windows_huge = o->windows_huge;
	et_strlcpy(x->path, o->path, sizeof x->path);
	et_strlcpy(x->build_id, o->build_id, sizeof x->build_id);
	et_strlcpy(x->backend, et_backend_name(o->backend), sizeof x->backend);
	if (o->reason != ET_R_NONE) {
		if (o->skip_detail)
			snprintf(x->reason, sizeof x->reason, "%s: %s", et_reason_text(o->reason), o->skip_detail);
		else
			et_strlcpy(x->reason, et_reason_text(o->reason), sizeof x->reason);
	} else if (o->skip == ET_R_NONE && o->nwindows == 0) {
		et_strlcpy(x->reason, et_reason_text(ET_R_NO_WINDOW), sizeof x->reason);
	}
	for (uint32_t s = 0; s < o->nsegs; s++) {
		if (!x->text_start || o->segs[s].start < x->text_start)
			x->text_start = o->segs[s].start;
		if (o->segs[s].end > x->text_end)
			x->text_end = o->segs[s].end;
	}
	x->text_bytes = o->text_bytes;
	x->eligible_bytes = o->skip == ET_R_NONE ? o->eligible_bytes : 0;
	x->remapped_bytes = o->remapped_bytes;
	x->huge_bytes = o->huge_bytes;
	x->elapsed_ns = o->elapsed_ns;
	x->zero_copy_bytes = o->zero_copy_bytes;
	x->padded_bytes = o->padded_bytes;
}

struct object_ctx {
	unsigned i;
	struct enormoustext_object *x;
	bool ok;
};

static void object_read(const struct et_run *run, void *arg)
{
	struct object_ctx *c = arg;
	c->ok = c->i < run->nobjs;
	if (c->ok)
		object_to_public(&run->objs[c->i], c->x);
}

int enormoustext_get_object(unsigned i, struct enormoustext_object *out)
{
	ET_KEEP_ERRNO;
	if (!out || out->size < offsetof(struct enormoustext_object, elapsed_ns))
		return -EINVAL;
	if (et_other.object)
		return et_other.object(i, out);
	struct enormoustext_object x;
	memset(&x, 0, sizeof x);
	x.size = out->size < sizeof x ? out->size : (uint32_t)sizeof x;
	struct object_ctx c = { i, &x, false };
	et_pass_read(object_read, &c);
	if (!c.ok)
		return -ERANGE;
	memcpy(out, &x, x.size);
	return 0;
}

int enormoustext_refresh(void)
{
	ET_KEEP_ERRNO;
	return et_pass_refresh();
}

int enormoustext_remap_range(const void *start, size_t len)
{
	ET_KEEP_ERRNO;
	return et_pass_range(start, len);
}

const char *enormoustext_version(void)
{
	return ENORMOUSTEXT_VERSION_STRING;
}
