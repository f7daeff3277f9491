/*
 * runtime/perfmap.c — the perf map of moved text (ENORMOUSTEXT_PERFMAP=1):
 * /tmp/perf-PID.map, the functions of every moved window (core/elfsyms.c),
 * so that perf names samples in anonymous copies.
 *
 * Owns: which process's map this is (a later pass adds, a stale map of an
 * earlier process with the same pid is replaced).
 * May call: core (elfsyms, outfile, log).
 * Never: follows a link or writes into a FIFO at the name in /tmp.
 */
#include "runtime/report.h"

#include "core/elfsyms.h"
#include "core/log.h"

#include <stdio.h>
#include <unistd.h>

/* The process (pid) whose map this library has written: its later passes
 * add to it, while a map left by an earlier process with the same pid is
 * replaced. */
static pid_t g_map_pid;

int et_perfmap_write(const struct et_run *run)
{
	bool moved = false;
	for (size_t i = 0; i < run->nobjs && !moved; i++)
		moved = run->objs[i].remapped_bytes != 0;
	if (!moved)
		return 0;
	char path[64], eb[24], why[160];
	pid_t me = getpid();
	snprintf(path, sizeof path, "/tmp/perf-%ld.map", (long)me);
	/* /tmp is anyone's: a link or a FIFO put at our name is not followed,
	 * only a regular file is replaced */
	struct et_out out;
	int e = et_out_open(&out, path,
	                    ET_OUT_NOFOLLOW | ET_OUT_FILES_ONLY | (g_map_pid == me ? ET_OUT_KEEP : 0));
	if (e) {
		const char *w = et_out_why(&out, why, sizeof why);
		et_log(0, "ENORMOUSTEXT_PERFMAP: cannot write %s: %s%s", path, w ? w : et_out_errno_text(-e, eb),
		       w ? ": left alone" : "");
		return 0;
	}
	size_t total = 0;
	const uint64_t H = run->si.pmd_size;
	for (size_t i = 0; i < run->nobjs; i++) {
		const struct et_object *o = &run->objs[i];
		if (!o->remapped_bytes)
			continue;
		/* The moved windows, neighbours merged, in chunks of 32 ranges.
		 * Every window of the object: after summarise(), o->nwindows
		 * counts only the windows the report counts (padded ones that
		 * could not be had are left out), while the table still holds
		 * them all, from o->first_window on. */
		uint64_t ranges[64];
		size_t n = 0;
		for (size_t j = o->first_window; j < run->nwins && run->wins[j].object == (uint32_t)i; j++) {
			const struct et_window *w = &run->wins[j];
			if (!w->remapped)
				continue;
			if (n && ranges[2 * n - 1] == w->addr) {
				ranges[2 * n - 1] = w->addr + H;
				continue;
			}
			if (n == 32) {
				total += et_perfmap_symbols(&out, o->path, o->base, ranges, n);
				n = 0;
			}
			ranges[2 * n] = w->addr;
			ranges[2 * n + 1] = w->addr + H;
			n++;
		}
		total += et_perfmap_symbols(&out, o->path, o->base, ranges, n);
	}
	e = et_out_commit(&out);
	if (e) {
		const char *w = et_out_why(&out, why, sizeof why);
		et_log(0, "ENORMOUSTEXT_PERFMAP: cannot write %s: %s", path, w ? w : et_out_errno_text(-e, eb));
		return 0;
	}
	g_map_pid = me;
	et_log(2, "perf map %s: %zu functions in moved text", path, total);
	return (int)total;
}
