/*
 * core/run.h — one pass of the pipeline as plain data: the options and
 * facts it runs with, the objects it looks at and the windows it plans.
 *
 *   options ─▶ sysinfo ─▶ objects ─▶ plan ─▶ remap ─▶ verify ─▶ report
 *
 * Each stage reads what the ones before it wrote here and writes its own
 * part; runtime/pipeline.c drives them in that order.
 */
#ifndef ET_CORE_RUN_H
#define ET_CORE_RUN_H

#include "core/plan.h"
#include "core/sysinfo.h"

struct et_run {
	struct et_options opt;
	struct et_sysinfo si;
	struct et_object *objs;
	size_t nobjs;
	struct et_window *wins;
	size_t nwins;
	uint64_t t0_ns, elapsed_ns;
	uint64_t cpu_ns;               /* CPU time of the threads that ran the passes, in them */
	enum et_reason reason;         /* process-level reason (off, secure, ...) */
	const char *reason_detail;
	bool ran;
	bool quick;                    /* stopped after counting: no object has a
	                                  segment as large as a huge page */
	bool quick_lazy;               /* ... and the checks for later passes wait
	                                  for the first dlopen */
	/* A copy loaded host-wide into a program with too little text and no
	 * variable of the library's in its environment: the host's files are
	 * read, and the options taken from them, by this call at the first
	 * dlopen (runtime/init.c; NULL: decided at start-up).  False: the
	 * library stands down from then on. */
	bool (*decide_later)(struct et_run *run);
	bool again;                    /* windows already moved may move again */
	unsigned passes;               /* passes run so far (0: start-up) */
	uint64_t quick_text;           /* text bytes seen by that count */
	size_t win_limit;              /* ENORMOUSTEXT_DEFER_RATE: move at most this many
	                                  windows in this pass, the hottest first (0: all) */
	size_t pieces_moved;           /* ... windows it moved */
	unsigned long long loader_subs;/* the loader's count of objects removed when the pass
	                                  read its list: a window is swapped in only while it
	                                  is still that (runtime/loader.h) */
	bool unloaded;                 /* ... and it was not, at a swap: left for the next pass */
	bool deferred;                 /* the pass runs after the process has lived a while (the
	                                  deferred worker): what of the text has run tells what
	                                  is worth a copy (opt.copy_min) */
	bool summarised;               /* the start-up's summary was given */
};

#endif
