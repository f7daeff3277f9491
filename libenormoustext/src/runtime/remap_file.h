/*
 * runtime/remap_file.h — the file behind a window and whether the window
 * is still the text the pass planned (remap_file.c): for the remap
 * stage's parts.
 */
#ifndef ET_RUNTIME_REMAP_FILE_H
#define ET_RUNTIME_REMAP_FILE_H

#include "core/run.h"

/* The file behind the windows of one object, opened once per round.
 * Starts as { -1, 0, false, false }; whoever made it closes fd if >= 0. */
struct et_file_cache {
	int fd;
	uint32_t object;
	bool tried;
	bool overlay;   /* the file is on overlayfs (see et_remap_file_open) */
};

/* An open file descriptor for the file window w maps (cached in fc), or -1
 * with w's reason set (ET_R_FILE_CHANGED). */
ET_HIDDEN int et_remap_file_open(struct et_run *run, struct et_window *w, struct et_file_cache *fc);
/* Is window w still the text the pass planned it as?  With the loader's
 * lock held, subs the loader's count of objects removed now (see
 * remap_file.c). */
ET_HIDDEN bool et_remap_file_still_planned(struct et_run *run, const struct et_window *w,
                                           unsigned long long subs);
/* At the start of each section under the loader's lock: the loader's list
 * is read again by the first et_remap_file_still_planned that needs it. */
ET_HIDDEN void et_remap_file_presence_forget(void);

#endif
