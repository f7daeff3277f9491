/*
 * tools/enormoustext/perfdata.c — the perf.data reader of `profile
 * import` (see perfdata.h).
 *
 * The format is perf's (tools/perf/Documentation/perf.data-file-format.txt
 * in the kernel tree), in the byte order of this machine:
 *
 *   file mode   the header (magic "PERFILE2", its size, the size of an
 *               attribute entry, the attrs, data and event_types sections,
 *               a bitmap of the features), the attrs (a perf_event_attr
 *               and the section of its sample ids, each), the data (the
 *               records), then a table of the feature sections, one per
 *               bit set, in bit order; HEADER_BUILD_ID (bit 2) holds
 *               build_id_event entries.
 *   pipe mode   the magic and 16; then records only: the attrs come as
 *               PERF_RECORD_HEADER_ATTR, the build-ids as
 *               PERF_RECORD_HEADER_BUILD_ID.
 *
 * A SAMPLE's body is laid out by its event's sample_type (IDENTIFIER, IP,
 * TID, TIME, ...); with sample_id_all, every other record ends with the
 * sample_id fields (TID, TIME, ID, STREAM_ID, CPU, IDENTIFIER).  Events
 * with different layouts are told apart by PERF_SAMPLE_IDENTIFIER (perf
 * sets it then).  Records are handed on in time order (perf's per-CPU
 * buffers are flushed in rounds, so a mapping may come after a sample in
 * it on another CPU), the file's order among equal times.
 *
 * Owns: reading perf.data.  Never: reads outside the buffer it is given
 * (every offset is checked before it is used, sizes without overflow).
 */
#include "perfdata.h"

#include <linux/perf_event.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ATTRS 4096
#define FILE_HEADER_SIZE 104         /* magic .. adds_features[4] */
#define ATTR_VER0 64                 /* PERF_ATTR_SIZE_VER0 */
#define HEADER_BUILD_ID 2
#define REC_HEADER_ATTR 64
#define REC_HEADER_BUILD_ID 67
#define REC_AUXTRACE 71
#define REC_COMPRESSED 81
#define REC_COMPRESSED2 83
#define BUILD_ID_SIZE_FLAG (1u << 15) /* PERF_RECORD_MISC_BUILD_ID_SIZE */
#define SAMPLE_ID_ALL_BIT 18         /* in perf_event_attr's flags word */

struct attr {
	uint64_t type;                   /* sample_type */
	bool id_all;
	uint32_t first_id, nids;         /* its ids in the id table */
};

struct idref {
	uint64_t id;
	uint32_t attr;
};

struct rec {
	uint64_t time, off;
};

struct rd {
	const uint8_t *b;
	size_t len;
	char *err;
	size_t errcap;
	bool failed;
	struct attr *attrs;
	size_t nattrs;
	struct idref *ids;
	size_t nids, capids;
	bool same;                       /* every event has attrs[0]'s layout */
};

static int bad(struct rd *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int bad(struct rd *r, const char *fmt, ...)
{
	if (!r->failed) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(r->err, r->errcap, fmt, ap);
		va_end(ap);
		r->failed = true;
	}
	return -1;
}

/* [off, off + n) lies in the buffer */
static bool in(const struct rd *r, uint64_t off, uint64_t n)
{
	return off <= r->len && n <= r->len - off;
}

static uint64_t u64at(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

static uint32_t u32at(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}

static uint16_t u16at(const uint8_t *p)
{
	uint16_t v;
	memcpy(&v, p, 2);
	return v;
}

bool et_perfdata_is(const void *buf, size_t len)
{
	return len >= 8 && (!memcmp(buf, "PERFILE2", 8) || !memcmp(buf, "2ELIFREP", 8));
}

/* An event's attributes from a perf_event_attr of avail bytes at p. */
static int add_attr(struct rd *r, const uint8_t *p, uint64_t avail, uint64_t where)
{
	if (avail < ATTR_VER0)
		return bad(r, "an event's attributes of %llu bytes (at byte %llu; at least %d)",
		           (unsigned long long)avail, (unsigned long long)where, ATTR_VER0);
	if (r->nattrs == MAX_ATTRS)
		return bad(r, "more than %d events", MAX_ATTRS);
	struct attr *a = &r->attrs[r->nattrs++];
	a->type = u64at(p + 24);
	a->id_all = (u64at(p + 40) >> SAMPLE_ID_ALL_BIT) & 1;
	a->first_id = (uint32_t)r->nids;
	a->nids = 0;
	return 0;
}

static int add_ids(struct rd *r, const uint8_t *p, uint64_t n)
{
	if (n > (1u << 24) || r->nids + n > (1u << 24))
		return bad(r, "more than %u sample ids", 1u << 24);
	if (r->nids + n > r->capids) {
		size_t cap = r->capids ? r->capids : 64;
		while (cap < r->nids + n)
			cap *= 2;
		struct idref *q = realloc(r->ids, cap * sizeof *q);
		if (!q)
			return bad(r, "out of memory");
		r->ids = q;
		r->capids = cap;
	}
	for (uint64_t i = 0; i < n; i++)
		r->ids[r->nids++] = (struct idref){ u64at(p + 8 * i), (uint32_t)(r->nattrs - 1) };
	r->attrs[r->nattrs - 1].nids += (uint32_t)n;
	return 0;
}

static int by_id(const void *a, const void *b)
{
	const struct idref *x = a, *y = b;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* After the attrs are known: can their samples be read? */
static int check_attrs(struct rd *r)
{
	if (!r->nattrs)
		return bad(r, "no events (no attributes)");
	r->same = true;
	for (size_t i = 1; i < r->nattrs; i++)
		if (r->attrs[i].type != r->attrs[0].type || r->attrs[i].id_all != r->attrs[0].id_all)
			r->same = false;
	for (size_t i = 0; i < r->nattrs; i++) {
		uint64_t t = r->attrs[i].type;
		if (!(t & PERF_SAMPLE_IP) || !(t & PERF_SAMPLE_TID))
			return bad(r, "event %zu's samples have no %s (sample_type 0x%llx): where they ran is "
			           "not known", i, !(t & PERF_SAMPLE_IP) ? "IP" : "TID", (unsigned long long)t);
		if (!r->same && !(t & PERF_SAMPLE_IDENTIFIER))
			return bad(r, "events with different sample layouts and no PERF_SAMPLE_IDENTIFIER: "
			           "the samples cannot be told apart");
	}
	if (r->nids)
		qsort(r->ids, r->nids, sizeof *r->ids, by_id);
	return 0;
}

/* The event a record with sample id `id` belongs to, or NULL. */
static const struct attr *attr_of(const struct rd *r, uint64_t id)
{
	size_t a = 0, b = r->nids;
	while (a < b) {
		size_t m = a + (b - a) / 2;
		if (r->ids[m].id < id)
			a = m + 1;
		else
			b = m;
	}
	return a < r->nids && r->ids[a].id == id ? &r->attrs[r->ids[a].attr] : NULL;
}

/* The event of the record at off (header read, size sz): its attrs, or
 * NULL when it names none. */
static const struct attr *rec_attr(const struct rd *r, uint64_t off, uint32_t type, uint64_t sz)
{
	if (r->same)
		return &r->attrs[0];
	/* IDENTIFIER everywhere: first in a sample, last in a sample_id */
	if (type == PERF_RECORD_SAMPLE)
		return sz >= 16 ? attr_of(r, u64at(r->b + off + 8)) : NULL;
	return sz >= 16 ? attr_of(r, u64at(r->b + off + sz - 8)) : NULL;
}

/* Where in a SAMPLE's body (after the header) its fields are, by
 * sample_type: the IP, the pid/tid, the time (-1: none). */
static void sample_layout(uint64_t t, int *ip, int *tid, int *time)
{
	int o = 0;
	if (t & PERF_SAMPLE_IDENTIFIER)
		o += 8;
	*ip = (t & PERF_SAMPLE_IP) ? o : -1;
	o += (t & PERF_SAMPLE_IP) ? 8 : 0;
	*tid = (t & PERF_SAMPLE_TID) ? o : -1;
	o += (t & PERF_SAMPLE_TID) ? 8 : 0;
	*time = (t & PERF_SAMPLE_TIME) ? o : -1;
}

/* A non-sample record's time, from its sample_id (false: none). */
static bool trailer_time(const struct attr *a, const uint8_t *rec, uint64_t sz, uint64_t *time)
{
	uint64_t t = a->type;
	if (!a->id_all || !(t & PERF_SAMPLE_TIME))
		return false;
	uint64_t n = 0;
	n += (t & PERF_SAMPLE_TID) ? 8 : 0;
	n += 8;                                            /* TIME */
	n += (t & PERF_SAMPLE_ID) ? 8 : 0;
	n += (t & PERF_SAMPLE_STREAM_ID) ? 8 : 0;
	n += (t & PERF_SAMPLE_CPU) ? 8 : 0;
	n += (t & PERF_SAMPLE_IDENTIFIER) ? 8 : 0;
	if (sz < 8 + n)
		return false;
	*time = u64at(rec + sz - n + ((t & PERF_SAMPLE_TID) ? 8 : 0));
	return true;
}

/* A NUL-ended string in [p, p + n): p, or NULL. */
static const char *str_in(const uint8_t *p, uint64_t n)
{
	return n && memchr(p, '\0', n) ? (const char *)p : NULL;
}

/* A build_id_event at off, of sz bytes (header read). */
static int build_id_event(struct rd *r, const struct et_pd_ops *ops, uint64_t off, uint64_t sz, uint16_t misc)
{
	const uint8_t *p = r->b + off;
	if (sz < 8 + 4 + 24 + 1)
		return bad(r, "a build-id entry of %llu bytes (at byte %llu)", (unsigned long long)sz,
		           (unsigned long long)off);
	size_t n = (misc & BUILD_ID_SIZE_FLAG) ? p[8 + 4 + 20] : 20;   /* data[20], size */
	if (n > 20)
		return bad(r, "a build-id of %zu bytes (at byte %llu; at most 20)", n, (unsigned long long)off);
	const char *path = str_in(p + 36, sz - 36);
	if (!path)
		return bad(r, "a build-id entry whose file name has no end (at byte %llu)", (unsigned long long)off);
	struct et_pd_buildid b = { (int32_t)u32at(p + 8), (uint16_t)(misc & PERF_RECORD_MISC_CPUMODE_MASK),
		                   p + 12, n, path };
	if (ops->buildid)
		ops->buildid(ops->ctx, &b);
	return 0;
}

/* The HEADER_BUILD_ID feature of a file-mode perf.data, when it has one. */
static int file_build_ids(struct rd *r, const struct et_pd_ops *ops, uint64_t table)
{
	const uint8_t *feat = r->b + 72;
	if (!((feat[HEADER_BUILD_ID / 8] >> (HEADER_BUILD_ID % 8)) & 1))
		return 0;
	int before = 0;
	for (int bit = 0; bit < HEADER_BUILD_ID; bit++)
		before += (feat[bit / 8] >> (bit % 8)) & 1;
	uint64_t ent = table + 16u * (uint64_t)before;
	if (!in(r, ent, 16))
		return bad(r, "truncated: the table of feature sections (at byte %llu) is missing",
		           (unsigned long long)table);
	uint64_t off = u64at(r->b + ent), size = u64at(r->b + ent + 8);
	if (!in(r, off, size))
		return bad(r, "truncated: the build-id section [%llu, +%llu) runs past the end",
		           (unsigned long long)off, (unsigned long long)size);
	for (uint64_t o = off; o < off + size;) {
		if (off + size - o < 8)
			return bad(r, "a build-id entry cut short (at byte %llu)", (unsigned long long)o);
		uint16_t sz = u16at(r->b + o + 6);
		if (sz < 8 || sz > off + size - o)
			return bad(r, "a build-id entry of %u bytes (at byte %llu) %s", sz, (unsigned long long)o,
			           sz < 8 ? "is too short" : "runs past its section");
		if (build_id_event(r, ops, o, sz, u16at(r->b + o + 4)) != 0)
			return -1;
		o += sz;
	}
	return 0;
}

static int by_time(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->off < y->off ? -1 : x->off > y->off;
}

/* One record, handed on (off: its start; sz: its size, in the buffer). */
static int dispatch(struct rd *r, const struct et_pd_ops *ops, uint64_t off)
{
	const uint8_t *h = r->b + off, *p = h + 8;
	uint32_t type = u32at(h);
	uint16_t misc = u16at(h + 4);
	uint64_t sz = u16at(h + 6), body = sz - 8;
	struct et_pd_event e;
	memset(&e, 0, sizeof e);
	switch (type) {
	case PERF_RECORD_SAMPLE: {
		const struct attr *a = rec_attr(r, off, type, sz);
		if (!a)
			return bad(r, "a sample of no event (its id is in no event's ids; at byte %llu)",
			           (unsigned long long)off);
		int ip, tid, time;
		sample_layout(a->type, &ip, &tid, &time);
		if (body < (uint64_t)tid + 8 || body < (uint64_t)ip + 8)
			return bad(r, "a sample of %llu bytes, too short for its layout (at byte %llu)",
			           (unsigned long long)sz, (unsigned long long)off);
		e.kind = ET_PD_SAMPLE;
		e.ip = u64at(p + ip);
		e.pid = u32at(p + tid);
		e.tid = u32at(p + tid + 4);
		e.cpumode = misc & PERF_RECORD_MISC_CPUMODE_MASK;
		break;
	}
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2: {
		uint64_t fixed = type == PERF_RECORD_MMAP ? 32 : 64;
		if (body < fixed + 1)
			return bad(r, "a mapping record of %llu bytes (at byte %llu)", (unsigned long long)sz,
			           (unsigned long long)off);
		e.kind = ET_PD_MMAP;
		e.pid = u32at(p);
		e.tid = u32at(p + 4);
		e.addr = u64at(p + 8);
		e.len = u64at(p + 16);
		e.pgoff = u64at(p + 24);
		e.name = str_in(p + fixed, body - fixed);
		if (!e.name)
			return bad(r, "a mapping record whose file name has no end (at byte %llu)",
			           (unsigned long long)off);
		if (type == PERF_RECORD_MMAP) {
			e.exec = !(misc & PERF_RECORD_MISC_MMAP_DATA);
		} else {
			e.exec = (u32at(p + 56) & 4) != 0;            /* PROT_EXEC */
			if (misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
				e.build_id_len = p[32];
				if (e.build_id_len > 20)
					return bad(r, "a mapping with a build-id of %zu bytes (at byte %llu; at most 20)",
					           e.build_id_len, (unsigned long long)off);
				e.build_id = p + 36;
			}
		}
		break;
	}
	case PERF_RECORD_COMM:
		if (body < 9 || !(e.name = str_in(p + 8, body - 8)))
			return bad(r, "a COMM record %s (at byte %llu)", body < 9 ? "cut short" : "whose name has no end",
			           (unsigned long long)off);
		e.kind = ET_PD_COMM;
		e.pid = u32at(p);
		e.tid = u32at(p + 4);
		break;
	case PERF_RECORD_FORK:
		if (body < 16)
			return bad(r, "a FORK record cut short (at byte %llu)", (unsigned long long)off);
		e.kind = ET_PD_FORK;
		e.pid = u32at(p);
		e.ppid = u32at(p + 4);
		e.tid = u32at(p + 8);
		e.ptid = u32at(p + 12);
		break;
	default:
		return 0;
	}
	if (ops->event)
		ops->event(ops->ctx, &e);
	return 0;
}

/* The records in [start, end): pipe mode's header records first (attrs,
 * build-ids), then the others in time order. */
static int records(struct rd *r, const struct et_pd_ops *ops, struct et_pd_info *info, uint64_t start,
                   uint64_t end, bool pipe)
{
	struct rec *recs = NULL;
	size_t nrecs = 0, cap = 0;
	int rc = -1;
	for (int pass = pipe ? 0 : 1; pass < 2; pass++) {
		uint64_t last = 0;
		for (uint64_t o = start; o < end;) {
			if (end - o < 8) {
				bad(r, "truncated: a record header cut short at byte %llu", (unsigned long long)o);
				goto out;
			}
			uint32_t type = u32at(r->b + o);
			uint16_t misc = u16at(r->b + o + 4);
			uint64_t sz = u16at(r->b + o + 6), next;
			if (sz < 8) {
				bad(r, "a record of %llu bytes at byte %llu (corrupt)", (unsigned long long)sz,
				    (unsigned long long)o);
				goto out;
			}
			if (sz > end - o) {
				bad(r, "truncated: the record at byte %llu runs past the end of the data",
				    (unsigned long long)o);
				goto out;
			}
			next = o + sz;
			if (type == REC_AUXTRACE) {               /* its data follows it */
				uint64_t aux = sz >= 16 ? u64at(r->b + o + 8) : 0;
				if (aux > end - next) {
					bad(r, "truncated: the AUX data at byte %llu runs past the end",
					    (unsigned long long)next);
					goto out;
				}
				next += aux;
			}
			if (pass == 0) {
				if (type == REC_HEADER_ATTR) {
					if (sz < 8 + ATTR_VER0) {
						bad(r, "an event's attributes cut short (at byte %llu)", (unsigned long long)o);
						goto out;
					}
					uint64_t asz = u32at(r->b + o + 8 + 4);
					if (asz < ATTR_VER0 || asz > sz - 8 || (sz - 8 - asz) % 8) {
						bad(r, "an event's attributes of %llu bytes in a record of %llu (at byte %llu)",
						    (unsigned long long)asz, (unsigned long long)sz, (unsigned long long)o);
						goto out;
					}
					if (add_attr(r, r->b + o + 8, asz, o) != 0 ||
					    add_ids(r, r->b + o + 8 + asz, (sz - 8 - asz) / 8) != 0)
						goto out;
				} else if (type == REC_HEADER_BUILD_ID) {
					if (build_id_event(r, ops, o, sz, misc) != 0)
						goto out;
				}
				o = next;
				continue;
			}
			if (type == REC_COMPRESSED || type == REC_COMPRESSED2) {
				bad(r, "compressed records (perf record -z) at byte %llu: not read here",
				    (unsigned long long)o);
				goto out;
			}
			if (type == PERF_RECORD_LOST && sz >= 24)
				info->lost += u64at(r->b + o + 16);
			else if (type == PERF_RECORD_LOST_SAMPLES && sz >= 16)
				info->lost += u64at(r->b + o + 8);
			if (type == PERF_RECORD_SAMPLE || type == PERF_RECORD_MMAP || type == PERF_RECORD_MMAP2 ||
			    type == PERF_RECORD_COMM || type == PERF_RECORD_FORK) {
				info->records++;
				uint64_t t = last;
				const struct attr *a = rec_attr(r, o, type, sz);
				if (type == PERF_RECORD_SAMPLE) {
					info->samples++;
					int ip, tid, time;
					if (a) {
						sample_layout(a->type, &ip, &tid, &time);
						if (time >= 0 && sz >= 8 + (uint64_t)time + 8)
							t = u64at(r->b + o + 8 + time);
					}
				} else if (a && !trailer_time(a, r->b + o, sz, &t)) {
					t = last;
				}
				last = t;
				if (nrecs == cap) {
					cap = cap ? cap * 2 : 4096;
					struct rec *q = realloc(recs, cap * sizeof *q);
					if (!q) {
						bad(r, "out of memory");
						goto out;
					}
					recs = q;
				}
				recs[nrecs++] = (struct rec){ t, o };
			}
			o = next;
		}
		if (pass == 0 && check_attrs(r) != 0)
			goto out;
	}
	if (nrecs)
		qsort(recs, nrecs, sizeof *recs, by_time);
	for (size_t i = 0; i < nrecs; i++)
		if (dispatch(r, ops, recs[i].off) != 0)
			goto out;
	rc = 0;
out:
	free(recs);
	return rc;
}

int et_perfdata_read(const void *buf, size_t len, const struct et_pd_ops *ops, struct et_pd_info *info,
                     char *err, size_t errcap)
{
	struct rd r = { .b = buf, .len = len, .err = err, .errcap = errcap };
	memset(info, 0, sizeof *info);
	if (errcap)
		err[0] = '\0';
	int rc = -1;
	r.attrs = calloc(MAX_ATTRS, sizeof *r.attrs);
	if (!r.attrs)
		return bad(&r, "out of memory");
	if (len < 16) {
		bad(&r, "truncated: %zu bytes, less than a perf.data header", len);
		goto out;
	}
	if (!memcmp(buf, "2ELIFREP", 8)) {
		bad(&r, "a perf.data of the other byte order: not read here");
		goto out;
	}
	if (memcmp(buf, "PERFILE2", 8)) {
		bad(&r, "not a perf.data file");
		goto out;
	}
	uint64_t hsize = u64at(r.b + 8);
	if (hsize == 16) {                                    /* pipe mode */
		info->pipe = true;
		rc = records(&r, ops, info, 16, len, true);
		goto out;
	}
	if (hsize < FILE_HEADER_SIZE) {
		bad(&r, "a perf.data header of %llu bytes (at least %d)", (unsigned long long)hsize, FILE_HEADER_SIZE);
		goto out;
	}
	if (len < FILE_HEADER_SIZE) {
		bad(&r, "truncated: %zu bytes, less than the perf.data header", len);
		goto out;
	}
	uint64_t attr_size = u64at(r.b + 16), aoff = u64at(r.b + 24), asize = u64at(r.b + 32);
	uint64_t doff = u64at(r.b + 40), dsize = u64at(r.b + 48);
	if (attr_size < ATTR_VER0 + 16 || attr_size > (1u << 16)) {
		bad(&r, "an attribute entry of %llu bytes in the header (corrupt)", (unsigned long long)attr_size);
		goto out;
	}
	if (!in(&r, aoff, asize)) {
		bad(&r, "truncated: the attributes [%llu, +%llu) run past the end (%zu bytes)",
		    (unsigned long long)aoff, (unsigned long long)asize, len);
		goto out;
	}
	if (asize % attr_size) {
		bad(&r, "attributes of %llu bytes, not a whole number of %llu-byte entries",
		    (unsigned long long)asize, (unsigned long long)attr_size);
		goto out;
	}
	if (!in(&r, doff, dsize)) {
		bad(&r, "truncated: the data [%llu, +%llu) runs past the end (%zu bytes)", (unsigned long long)doff,
		    (unsigned long long)dsize, len);
		goto out;
	}
	for (uint64_t o = aoff; o < aoff + asize; o += attr_size) {
		uint64_t asz = u32at(r.b + o + 4);
		if (!asz)
			asz = ATTR_VER0;
		if (asz > attr_size - 16) {
			bad(&r, "an event's attributes of %llu bytes in a %llu-byte entry (at byte %llu)",
			    (unsigned long long)asz, (unsigned long long)attr_size, (unsigned long long)o);
			goto out;
		}
		if (add_attr(&r, r.b + o, asz, o) != 0)
			goto out;
		uint64_t ioff = u64at(r.b + o + attr_size - 16), isize = u64at(r.b + o + attr_size - 8);
		if (!in(&r, ioff, isize) || isize % 8) {
			bad(&r, "the sample ids of event %zu [%llu, +%llu) %s", r.nattrs - 1, (unsigned long long)ioff,
			    (unsigned long long)isize, isize % 8 ? "are not whole ids" : "run past the end");
			goto out;
		}
		if (add_ids(&r, r.b + ioff, isize / 8) != 0)
			goto out;
	}
	if (check_attrs(&r) != 0)
		goto out;
	if (file_build_ids(&r, ops, doff + dsize) != 0)
		goto out;
	rc = records(&r, ops, info, doff, doff + dsize, false);
out:
	info->nattrs = r.nattrs;
	free(r.attrs);
	free(r.ids);
	return rc;
}
