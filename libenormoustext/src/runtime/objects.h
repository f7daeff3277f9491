/*
 * runtime/objects.h — the objects loaded in this process, from the loader
 * (dl_iterate_phdr, and a dlmopen namespace's link maps).
 */
#ifndef ET_RUNTIME_OBJECTS_H
#define ET_RUNTIME_OBJECTS_H

#include "core/object.h"

/* Fill objs (at most cap) from dl_iterate_phdr; returns how many objects
 * there are (call with cap = 0 to count).  *max_seg (if not NULL) gets the
 * size of the largest executable segment of the objects not filled in,
 * *text_bytes (if not NULL) the sum of their executable segments. */
ET_HIDDEN size_t et_objects_collect(struct et_object *objs, size_t cap, uint64_t *max_seg,
                                     uint64_t *text_bytes);
/* The same from a namespace's list of link maps (dlmopen: dl_iterate_phdr
 * only shows the caller's namespace).  Needs each object's ELF header at its
 * load address; objects without one are left out. */
struct link_map;
ET_HIDDEN size_t et_objects_collect_linkmap(const struct link_map *head, struct et_object *objs,
                                            size_t cap);
/* Is the object (found through a link map) still loaded where it was? */
ET_HIDDEN bool et_object_still_mapped(const struct et_object *o);

#endif
