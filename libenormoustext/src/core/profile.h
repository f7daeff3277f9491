/*
 * core/profile.h — the profile format (see profile.c and the README): parse,
 * look up by build-id, heat of an address range; write (the one writer),
 * merge.  Used by the library (ENORMOUSTEXT_PROFILE, ENORMOUSTEXT_RECORD)
 * and the command (profile, record).  No process state; tables in one
 * scratch mapping.
 */
#ifndef ET_CORE_PROFILE_H
#define ET_CORE_PROFILE_H

#include "core/util.h"

/* What a recording samples, unless told otherwise: the library's
 * ENORMOUSTEXT_RECORD and the command's `record` alike.  64 bytes (a cache
 * line) are fine enough to tell functions apart for `profile order`, and
 * windows add them up anyway. */
#define ET_PROFILE_RECORD_GRANULE 64u
#define ET_PROFILE_RECORD_HZ 999          /* samples a second, a thread */

struct et_prof_obj {
	char build_id[41];
	uint32_t path_off, path_len;   /* the path hint, in et_profile.paths */
	uint32_t first, n;             /* its entries in et_profile.ents */
	uint64_t total;                /* its samples */
};

struct et_prof_ent {
	uint64_t vaddr;                /* granule start, in the object's ELF address space */
	uint64_t count;
};

struct et_profile {
	void *mem;                     /* one scratch mapping holding the tables */
	size_t mem_len;
	struct et_prof_obj *objs;
	size_t nobjs;
	struct et_prof_ent *ents;
	size_t nents;
	char *paths;
	uint64_t granule;
	/* The build-ids, hashed (open addressing, linear probing, at most half
	 * full): each slot is the hash's upper 32 bits << 32 | object index + 1,
	 * 0 = empty.  In mem; nslots is a power of two (0: no table). */
	uint64_t *slots;
	size_t nslots;
	uint64_t seed;                 /* of the hash: per profile, not guessable */
	char err[128];                 /* why it was refused: "line N: ..." */
};

/* Parse a profile held in memory (profile.c); 0, or -errno with p->err set
 * and nothing allocated. */
ET_HIDDEN int et_profile_parse(struct et_profile *p, const char *text, size_t len);
ET_HIDDEN int et_profile_load(struct et_profile *p, const char *path);
ET_HIDDEN void et_profile_free(struct et_profile *p);
/* The object with this build-id (lower-case hex, as the parser stores it),
 * or NULL: O(1) expected, a hash lookup. */
ET_HIDDEN const struct et_prof_obj *et_profile_find(const struct et_profile *p, const char *build_id);
ET_HIDDEN const char *et_profile_path(const struct et_profile *p, const struct et_prof_obj *o);
/* Samples of o in [lo, hi) of its address space: O(log n + the entries in
 * the range), so disjoint ranges (windows) cost O(n + windows log n). */
ET_HIDDEN uint64_t et_profile_heat(const struct et_profile *p, const struct et_prof_obj *o,
                                   uint64_t lo, uint64_t hi);

/* Writing a profile: the one writer of the format (the library's
 * ENORMOUSTEXT_RECORD, the command's record and profile merge).  What it
 * writes, the parser reads back as it was given: an object line per
 * et_profile_write_object, a count line per et_profile_write_count.  What
 * the parser would refuse is not written and the call returns -EINVAL: a
 * build-id that is not 1 to 20 bytes in hex (its counts are dropped too),
 * a count before any object, an address not a granule's start or not above
 * the object's last.  A newline (or CR) in a path or the comment becomes
 * '?' (a line is the format's unit).  No malloc, no stdio: through a sink. */
struct et_prof_writer {
	struct et_sink out;
	uint64_t granule;
	uint64_t last;                 /* the object's last address written */
	bool in_object, any;           /* an object to count in; a count written in it */
};
/* The header, and "# comment" when comment is not NULL; out is copied (its
 * buffer stays the caller's). */
ET_HIDDEN void et_profile_write_begin(struct et_prof_writer *w, const struct et_sink *out,
                                      uint64_t granule, const char *comment);
ET_HIDDEN int et_profile_write_object(struct et_prof_writer *w, const char *build_id, const char *path);
ET_HIDDEN int et_profile_write_count(struct et_prof_writer *w, uint64_t vaddr, uint64_t count);
/* Flush the sink. */
ET_HIDDEN void et_profile_write_end(struct et_prof_writer *w);

/* The sum of n profiles (parsed, all of one granule) written to out: one
 * object per build-id, in build-id order, named by the first profile that
 * has it; each granule's count the sum of the profiles' counts (at most
 * UINT64_MAX); an object no profile has counts for stays, with none.
 * O(objects log objects + entries log profiles), in one scratch mapping.
 * 0, or -EINVAL (no profile, or the granules differ) / -ENOMEM with
 * nothing written. */
ET_HIDDEN int et_profile_merge(const struct et_profile *ps, size_t n, const struct et_sink *out,
                               const char *comment);
#endif
