/*
 * itlbgrind.h — the client requests of itlbgrind (bench/itlb), for programs
 * that want counts for a region of their own run.
 *
 *   ITLBGRIND_SNAPSHOT("label");
 *
 * writes a record of the counts so far ("ended": "snapshot", "label": ...)
 * where the process's records go; the counters are not reset, so the
 * difference of two snapshots is what ran between them.  Outside Valgrind
 * (or under another tool) it does nothing: a few instructions, no call.
 * Needs Valgrind's valgrind.h (Debian: the valgrind package).
 */
#ifndef ITLBGRIND_H
#define ITLBGRIND_H

#include <valgrind/valgrind.h>

enum {
	ITLBGRIND_USERREQ_SNAPSHOT = VG_USERREQ_TOOL_BASE('I', 'T'),
};

#define ITLBGRIND_SNAPSHOT(label) \
	VALGRIND_DO_CLIENT_REQUEST_STMT(ITLBGRIND_USERREQ_SNAPSHOT, (label), 0, 0, 0, 0)

#endif
