/*
 * core/profile.h — the profile format (see profile.c and the README): parse,
 * look up by build-id, heat of an address range.  Used by the library
 * (ENORMOUSTEXT_PROFILE) and the command (profile, record).  No process
 * state; tables in one scratch mapping.
 */
#ifndef ET_CORE_PROFILE_H
#define ET_CORE_PROFILE_H

#include "core/base.h"

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
#endif
