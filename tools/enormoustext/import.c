/*
 * tools/enormoustext/import.c — profiles other tools recorded, read into
 * the counts of a profile of this project's format: for `profile import`
 * (profile.c) and `record --from-perf-script` (record.c).
 *
 * Each FILE is told by its content, not its name:
 *   gzip (1f 8b)            decompressed (zlib), then told again
 *   perf.data ("PERFILE2")  perf record's file or pipe output (perfdata.c)
 *   text (no NUL byte)      `perf script -F pid,ip --show-mmap-events`
 *   anything else           a pprof profile.proto (pprof.c; a valid one
 *                           always holds a NUL byte: its string table
 *                           starts with "")
 * Every sample becomes (object, file offset) through the mappings the file
 * gives, then (build-id, address in the object's ELF address space)
 * through the object's program headers (attrib.c: the file as named, or
 * perf's build-id cache), counted per 64-byte granule as `record` counts;
 * the sum over all FILEs is written by core/profile.c's writer.  A FILE
 * that is truncated or corrupt is one line naming it and what is wrong,
 * and nothing is written.
 *
 * Owns: telling the formats apart, gzip, the `perf script` text reader
 * (et_tool_import_file, et_tool_import_perf_script).
 * May call: attrib.c, perfdata.c, pprof.c, zlib, msg.c.
 * Never: parses options (profile.c and record.c do).
 */
#include "attrib.h"
#include "import.h"
#include "perfdata.h"
#include "pprof.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef ET_TOOL_PPROF
#include <zlib.h>
#endif

/* What one input may hold once decompressed (a gzip bomb stops there). */
#define IMPORT_MAX_BYTES (4ull << 30)

/* ---- input ------------------------------------------------------------ */

/* The whole of path ("-": standard input) in *buf (malloc'd). */
static int read_all(const char *path, uint8_t **buf, size_t *len)
{
	int fd = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY) : 0;
	struct stat st;
	if (fd < 0) {
		et_tool_err("%s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
		et_tool_err("%s: a directory (perf record --threading writes one: `perf data convert` or "
		            "perf record without it makes a file)", path);
		if (fd)
			close(fd);
		return -1;
	}
	size_t cap = S_ISREG(st.st_mode) && st.st_size > 0 ? (size_t)st.st_size + 1 : 65536, n = 0;
	uint8_t *b = malloc(cap);
	for (;;) {
		if (!b) {
			et_tool_err("%s: out of memory", path);
			break;
		}
		if (n == cap) {
			if (cap >= IMPORT_MAX_BYTES) {
				et_tool_err("%s: larger than %llu GiB", path, IMPORT_MAX_BYTES >> 30);
				break;
			}
			uint8_t *q = realloc(b, cap * 2);
			if (!q) {
				et_tool_err("%s: out of memory", path);
				break;
			}
			b = q;
			cap *= 2;
		}
		ssize_t got = read(fd, b + n, cap - n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			et_tool_err("%s: %s", path, strerror(errno));
			break;
		}
		if (got == 0) {
			if (fd)
				close(fd);
			*buf = b;
			*len = n;
			return 0;
		}
		n += (size_t)got;
	}
	free(b);
	if (fd)
		close(fd);
	return -1;
}

#ifdef ET_TOOL_PPROF
/* gzip data (one member or several) decompressed into *out. */
static int gunzip(const char *name, const uint8_t *in, size_t len, uint8_t **out, size_t *outlen)
{
	z_stream z;
	memset(&z, 0, sizeof z);
	if (inflateInit2(&z, 15 + 16) != Z_OK) {
		et_tool_err("%s: zlib: cannot start", name);
		return -1;
	}
	size_t cap = len * 4 + 4096, n = 0;
	uint8_t *b = malloc(cap);
	const uint8_t *p = in;
	size_t left = len;
	int zr = Z_OK;
	while (b) {
		z.next_in = (Bytef *)(uintptr_t)p;
		z.avail_in = left > (1u << 30) ? (1u << 30) : (uInt)left;
		size_t room = cap - n > (1u << 30) ? (1u << 30) : cap - n;
		z.next_out = b + n;
		z.avail_out = (uInt)room;
		uInt in0 = z.avail_in;
		zr = inflate(&z, Z_NO_FLUSH);
		n += room - z.avail_out;
		p += in0 - z.avail_in;
		left -= in0 - z.avail_in;
		if (zr == Z_STREAM_END) {
			/* another member may follow (gzip files may be concatenated) */
			if (!left)
				break;
			if (left >= 2 && p[0] == 0x1f && p[1] == 0x8b) {
				inflateReset(&z);
				continue;
			}
			break;          /* trailing bytes after the gzip data: ignored, as gzip does */
		}
		if (zr != Z_OK && zr != Z_BUF_ERROR)
			break;
		if (zr == Z_BUF_ERROR && z.avail_out && !left)
			break;          /* the input ended inside the stream */
		if (n == cap) {
			if (cap >= IMPORT_MAX_BYTES) {
				et_tool_err("%s: more than %llu GiB once decompressed", name, IMPORT_MAX_BYTES >> 30);
				inflateEnd(&z);
				free(b);
				return -1;
			}
			uint8_t *q = realloc(b, cap * 2);
			if (!q) {
				free(b);
				b = NULL;
				break;
			}
			b = q;
			cap *= 2;
		}
	}
	inflateEnd(&z);
	if (!b) {
		et_tool_err("%s: out of memory", name);
		return -1;
	}
	if (zr != Z_STREAM_END) {
		et_tool_err("%s: gzip data %s", name, zr == Z_DATA_ERROR ? "that is corrupt" :
		            zr == Z_BUF_ERROR || zr == Z_OK ? "cut short (truncated)" : "that zlib cannot read");
		free(b);
		return -1;
	}
	*out = b;
	*outlen = n;
	return 0;
}
#endif

/* ---- perf script text --------------------------------------------------- */

/* The lines of `perf script -F pid,ip --show-mmap-events`: mappings and
 * samples; the number of lines used. */
static size_t perf_script(const char *buf, size_t len, struct et_import_filter *flt)
{
	size_t used = 0;
	char line[8192];
	for (const char *s = buf, *end = buf + len; s < end;) {
		const char *e = memchr(s, '\n', (size_t)(end - s));
		if (!e)
			e = end;
		size_t n = (size_t)(e - s) < sizeof line - 1 ? (size_t)(e - s) : sizeof line - 1;
		memcpy(line, s, n);
		line[n] = '\0';
		s = e < end ? e + 1 : end;
		unsigned pid;
		unsigned long long ip, addr, mlen, pgoff;
		int k = 0;
		char *mm = strstr(line, "PERF_RECORD_MMAP");
		if (mm) {
			/* "PERF_RECORD_MMAP2 PID/TID: [0xADDR(0xLEN) @ 0xPGOFF ...]: r-xp PATH" */
			char *br = strchr(mm, '[');
			char *rb = br ? strstr(br, "]: ") : NULL;
			if (!br || !rb || sscanf(mm, "PERF_RECORD_MMAP%*[2] %u/", &pid) < 1)
				if (!br || !rb || sscanf(mm, "PERF_RECORD_MMAP %u/", &pid) != 1)
					continue;
			if (sscanf(br, "[0x%llx(0x%llx) @ %llx", &addr, &mlen, &pgoff) != 3)
				continue;
			char *perms = rb + 3, *path = strchr(perms, ' ');
			if (!path)
				continue;
			path++;
			/* MMAP2 lines say r-xp, MMAP lines only "x" */
			if (strchr(perms, 'x') && strchr(perms, 'x') < path)
				et_attr_map(pid, addr, mlen, pgoff, path, NULL);
			used++;
			continue;
		}
		if (sscanf(line, " %u %llx %n", &pid, &ip, &k) == 2 && k > 0) {
			used++;
			if (flt && flt->pid_set && pid != flt->pid) {
				flt->dropped++;
				continue;
			}
			if (flt)
				flt->kept++;
			et_attr_sample(pid, ip, 1);
		}
	}
	return used;
}

int et_tool_import_perf_script(const char *in, const char *out)
{
	uint8_t *buf;
	size_t len;
	if (read_all(in, &buf, &len) != 0)
		return ET_EXIT_BAD;
	size_t used = perf_script((const char *)buf, len, NULL);
	free(buf);
	if (used == 0) {
		et_tool_err("%s: no samples or mappings (use: perf script -F pid,ip --show-mmap-events)", in);
		return ET_EXIT_BAD;
	}
	char sum[160], comment[200];
	et_attr_summary(sum, sizeof sum);
	snprintf(comment, sizeof comment, "recorded by enormoustext record: %s", sum);
	if (et_attr_write(NULL, out, comment) != 0)
		return ET_EXIT_BAD;
	et_attr_say_unfound();
	fprintf(stderr, "enormoustext %s: %s from %s written to %s\n", et_tool_cmd, sum, in, out);
	return ET_EXIT_OK;
}

/* ---- perf.data ---------------------------------------------------------- */

struct bidpath {
	char *path;
	char hex[41];
	bool ambiguous;              /* two build-ids for one path */
};

struct comm {
	uint32_t tid;
	char name[16];
};

struct pd_ctx {
	struct et_import_filter *flt;
	struct bidpath *bids;
	size_t nbids, capbids;
	struct comm *comms;          /* by tid, open addressing; tid 0 empty */
	size_t ncomms, capcomms;
	bool failed;
};

/* An array of c grown (et_tool_grow); out of memory marks c failed (the
 * read then ends with one line) and leaves the array as it was. */
static void *pd_grow(struct pd_ctx *c, void *p, size_t *cap, size_t need, size_t elem)
{
	void *q = et_tool_grow(p, cap, need, elem);
	if (!q) {
		c->failed = true;
		return p;
	}
	return q;
}

static void pd_buildid(void *ctx, const struct et_pd_buildid *b)
{
	struct pd_ctx *c = ctx;
	if (b->path[0] != '/' || b->len < 1 || c->failed)
		return;
	char hex[41];
	et_hex_build_id(b->id, b->len, hex);
	for (size_t i = 0; i < c->nbids; i++)
		if (!strcmp(c->bids[i].path, b->path)) {
			if (strcmp(c->bids[i].hex, hex))
				c->bids[i].ambiguous = true;
			return;
		}
	c->bids = pd_grow(c, c->bids, &c->capbids, c->nbids + 1, sizeof *c->bids);
	char *p = strdup(b->path);
	if (c->failed || !p) {
		free(p);
		c->failed = true;
		return;
	}
	c->bids[c->nbids].path = p;
	snprintf(c->bids[c->nbids].hex, sizeof c->bids[c->nbids].hex, "%s", hex);
	c->bids[c->nbids].ambiguous = false;
	c->nbids++;
}

static struct comm *comm_slot(struct pd_ctx *c, uint32_t tid, bool add)
{
	if (add && (c->ncomms + 1) * 2 > c->capcomms) {
		size_t n = c->capcomms ? c->capcomms * 2 : 1024;
		struct comm *t = calloc(n, sizeof *t);
		if (!t) {
			c->failed = true;
			return NULL;
		}
		for (size_t i = 0; i < c->capcomms; i++) {
			if (!c->comms[i].tid)
				continue;
			size_t k = (c->comms[i].tid * 2654435761u) & (n - 1);
			while (t[k].tid)
				k = (k + 1) & (n - 1);
			t[k] = c->comms[i];
		}
		free(c->comms);
		c->comms = t;
		c->capcomms = n;
	}
	if (!c->capcomms || !tid)
		return NULL;
	size_t k = (tid * 2654435761u) & (c->capcomms - 1);
	while (c->comms[k].tid && c->comms[k].tid != tid)
		k = (k + 1) & (c->capcomms - 1);
	if (c->comms[k].tid == tid)
		return &c->comms[k];
	if (!add)
		return NULL;
	c->comms[k].tid = tid;
	c->ncomms++;
	return &c->comms[k];
}

static void set_comm(struct pd_ctx *c, uint32_t tid, const char *name)
{
	struct comm *s = comm_slot(c, tid, true);
	if (s)
		et_strlcpy(s->name, name, sizeof s->name);
}

static void pd_event(void *ctx, const struct et_pd_event *e)
{
	struct pd_ctx *c = ctx;
	struct et_import_filter *f = c->flt;
	switch (e->kind) {
	case ET_PD_MMAP: {
		if (!e->exec)
			return;
		char hex[41];
		const char *bid = NULL;
		if (e->build_id && e->build_id_len) {
			et_hex_build_id(e->build_id, e->build_id_len, hex);
			bid = hex;
		} else {
			for (size_t i = 0; i < c->nbids && !bid; i++)
				if (!c->bids[i].ambiguous && !strcmp(c->bids[i].path, e->name))
					bid = c->bids[i].hex;
		}
		et_attr_map(e->pid, e->addr, e->len, e->pgoff, e->name, bid);
		return;
	}
	case ET_PD_COMM:
		set_comm(c, e->tid, e->name);
		return;
	case ET_PD_FORK: {
		const struct comm *p = comm_slot(c, e->ptid, false);
		if (p && e->tid != e->ptid) {
			char name[16];
			memcpy(name, p->name, sizeof name);
			set_comm(c, e->tid, name);
		}
		return;
	}
	case ET_PD_SAMPLE:
		break;
	}
	if (f->pid_set && e->pid != f->pid) {
		f->dropped++;
		return;
	}
	if (f->comm) {
		const struct comm *s = comm_slot(c, e->tid, false);
		if (!s)
			s = comm_slot(c, e->pid, false);
		if (!s || strncmp(s->name, f->comm, 15)) {
			f->dropped++;
			return;
		}
	}
	f->kept++;
	/* the kernel's, a hypervisor's, a guest kernel's: no file of ours */
	if (e->cpumode == PERF_RECORD_MISC_KERNEL || e->cpumode == PERF_RECORD_MISC_HYPERVISOR ||
	    e->cpumode == PERF_RECORD_MISC_GUEST_KERNEL)
		et_attr_outside(1);
	else
		et_attr_sample(e->pid, e->ip, 1);
}

static int import_perf_data(const char *name, const uint8_t *buf, size_t len, struct et_import_filter *f,
                            uint64_t *lost)
{
	struct pd_ctx c = { .flt = f };
	struct et_pd_ops ops = { &c, pd_buildid, pd_event };
	struct et_pd_info info;
	char err[256];
	int rc = et_perfdata_read(buf, len, &ops, &info, err, sizeof err);
	if (rc != 0)
		et_tool_err("%s: %s", name, err);
	else if (c.failed)
		et_tool_err("%s: out of memory", name);
	for (size_t i = 0; i < c.nbids; i++)
		free(c.bids[i].path);
	free(c.bids);
	free(c.comms);
	*lost += info.lost;
	return rc != 0 || c.failed ? -1 : 0;
}

/* ---- a FILE, told by its content ---------------------------------------- */

int et_tool_import_file(const char *name, struct et_import_filter *f, uint64_t *lost)
{
	uint8_t *buf = NULL;
	size_t len = 0;
	if (read_all(name, &buf, &len) != 0)
		return -1;
	int rc = -1;
	if (len == 0) {
		et_tool_err("%s: empty", name);
		goto out;
	}
	if (len >= 2 && buf[0] == 0x1f && buf[1] == 0x8b) {
#ifdef ET_TOOL_PPROF
		uint8_t *raw;
		size_t rlen;
		if (gunzip(name, buf, len, &raw, &rlen) != 0)
			goto out;
		free(buf);
		buf = raw;
		len = rlen;
		if (len == 0) {
			et_tool_err("%s: empty once decompressed", name);
			goto out;
		}
#else
		et_tool_err("%s: gzip data: this enormoustext was built without zlib and protobuf-c (no pprof "
		            "import)", name);
		goto out;
#endif
	}
	et_attr_new_source();
	if (et_perfdata_is(buf, len)) {
		f->kind = "perf.data";
		rc = import_perf_data(name, buf, len, f, lost);
	} else if (!memchr(buf, '\0', len)) {
		f->kind = "perf script";
		if (f->comm) {
			et_tool_err("%s: `perf script -F pid,ip` text names no commands: --comm cannot select "
			            "its samples", name);
			goto out;
		}
		uint64_t before = f->kept + f->dropped;
		if (perf_script((const char *)buf, len, f) == 0 && f->kept + f->dropped == before) {
			et_tool_err("%s: not a perf.data file or a pprof profile, and as text no `perf script` "
			            "output (no samples or mappings; use: perf script -F pid,ip --show-mmap-events)",
			            name);
			goto out;
		}
		rc = 0;
	} else {
#ifdef ET_TOOL_PPROF
		f->kind = "pprof";
		rc = et_pprof_import(name, buf, len, f);
#else
		et_tool_err("%s: not a perf.data file or `perf script` text (a pprof profile? this "
		            "enormoustext was built without protobuf-c and zlib)", name);
#endif
	}
out:
	free(buf);
	return rc;
}
