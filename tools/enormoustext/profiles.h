/*
 * profiles.h — profiles as the command reads and adds them up
 * (profiles.c): a file loaded with one line naming it when it is bad, the
 * windows of an object that have samples, and the merge of several into
 * one (`profile merge`, and `record`'s merge of its processes' profiles).
 * The format itself is core/profile.c's.
 */
#ifndef ET_TOOL_PROFILES_H
#define ET_TOOL_PROFILES_H

#include "tool.h"

/* path into p (core/profile.c's parser): 0, or -1 after one line naming
 * the file and the line at fault. */
int et_tool_profile_load(struct et_profile *p, const char *path);

/* A window of W bytes of an object's text and its samples. */
struct et_tool_win {
	uint64_t start, samples;
};
/* The windows of W bytes of object o that have samples, in address order
 * (*out malloc'd); how many.  Out of memory ends the command (status 1). */
size_t et_tool_profile_windows(const struct et_profile *p, const struct et_prof_obj *o, uint64_t W,
                               struct et_tool_win **out);

/* Each of files loaded (a bad one, or one of another granule: one line
 * naming it), their sum written to out by core/profile.c's merge.
 * ET_EXIT_OK, or ET_EXIT_BAD after one line saying why (out untouched). */
int et_tool_profile_merge(const char *out, char *const *files, size_t n);
/* The same into t when it is already open (et_tool_out_open/_try: closed
 * or aborted here), else into out opened here. */
int et_tool_profile_merge_to(struct et_tool_out *t, const char *out, char *const *files, size_t n);

/* What a merge read and wrote (--json): per input its objects and
 * samples (inputs[] malloc'd, n entries: free with et_tool_merge_stats_free),
 * and the sum's objects (one per build-id) and samples. */
struct et_tool_merge_input {
	uint64_t objects, samples;
};
struct et_tool_merge_stats {
	struct et_tool_merge_input *inputs;
	size_t n;
	uint64_t granule, objects, samples;
};
/* et_tool_profile_merge_to, and st filled when it returns ET_EXIT_OK. */
int et_tool_profile_merge_stats(struct et_tool_out *t, const char *out, char *const *files, size_t n,
                                struct et_tool_merge_stats *st);
void et_tool_merge_stats_free(struct et_tool_merge_stats *st);

#endif
