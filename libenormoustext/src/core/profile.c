/*
 * core/profile.c — hot-text profiles: THE format, its parser, its writer,
 * and the merge of several.
 *
 * The format (text, version 1; documented in the README):
 *
 *   enormoustext-profile 1
 *   granule 4096
 *   object BUILD-ID PATH
 *   VADDR COUNT
 *   ...
 *
 * `granule` is the size of the address ranges samples are counted in (a
 * power of two, 64 bytes to 1 GiB).  Each `object` line starts an object:
 * its GNU build-id in hex (the key) and its path (a hint, the rest of the
 * line).  Each count line is a granule's start in the object's own ELF
 * address space (p_vaddr space: the run-time address minus the load base),
 * in hex, strictly increasing within an object, and how many samples fell
 * in it.  '#' starts a comment line; empty lines are ignored.
 *
 * Owns: the format — the parser (et_profile_parse/load: the library's
 * ENORMOUSTEXT_PROFILE, the command's profile show/order/merge), the
 * lookups (by build-id, heat of a range), the one writer (et_profile_write_*:
 * the library's ENORMOUSTEXT_RECORD, the command's record and merge) and
 * the merge (et_profile_merge).  Choosing windows from a profile is
 * plan.c's.
 * May call: util (scratch memory, the clock, the sink, reading a file),
 * log (errno as text).
 * Never: allocates with malloc or uses a stdio stream (it runs before
 * malloc may work, and in the destructor); writes a line its parser would
 * refuse; takes more than linear time in the file (see below).
 *
 * The parser takes a buffer and allocates nothing but one scratch mapping
 * for its tables (it may run before malloc works); every malformed line is
 * an error naming the line.  It is the part a hostile file reaches, and the
 * fuzz target's subject.  It must stay linear in the file: a fleet's profile
 * names hundreds of thousands of objects, and a process reads it at
 * start-up.  So the build-ids go into a hash table as they are read (a
 * duplicate is found, and named by its line, in O(1)), and
 * et_profile_find is a lookup in the same table, never a scan.
 */
#include "core/profile.h"

#include "core/log.h"
#include "core/util.h"
#include "os/os.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>

/*
 * The limits.  A profile is read at start-up, so what they bound is what one
 * start-up may spend, and the figure that decides them is the parse at the
 * limit (et_profile_load, best of 5, gcc -O2, this project's 2-core VM):
 *   64 MiB of count lines (5.7 million 64-byte granules, 227 objects)   0.26 s
 *   64 MiB of fleet-shaped objects (640,000, three counts each)         0.32 s
 *   1,048,576 objects (short build-ids), counts up to 64 MiB: the worst 0.33 s
 * Real profiles are far smaller.  One recorded clang++ compile: 19 objects,
 * 5,066 lines, 50 KB.  `record` writes a line per sampled 64-byte granule,
 * so even clang's 164 MiB of text with every cache line sampled is 2.7
 * million lines (about 40 MiB); a fleet's merged profile adds an object
 * line (about 80 bytes) per build of each library: 200,000 objects with a
 * few counts each are 20 MiB (0.15 s).  64 MiB holds both with room; a
 * lower cap would refuse dense profiles of big programs, a higher one would
 * let one file cost every start-up seconds.
 * The object limit is needed as well: an object costs six times a count
 * line (a 72-byte entry, a hash slot, a cache miss), and 64 MiB of short
 * object lines would be 4.8 million objects, 0.5 GB of memory and 1.3 s.
 * 1,048,576 (five times the largest fleet profile in view) caps the
 * objects' tables at 92 MB.
 */
#define PROFILE_MAX_BYTES (64u << 20)
#define PROFILE_MAX_OBJECTS (1u << 20)
#define PROFILE_MAX_OBJECTS_TEXT "1048576"
_Static_assert(PROFILE_MAX_OBJECTS == 1048576, "PROFILE_MAX_OBJECTS_TEXT says otherwise");

static void set_err(struct et_profile *p, size_t line, const char *what)
{
	if (!p->err[0])
		snprintf(p->err, sizeof p->err, "line %zu: %s", line, what);
}

static bool is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* A hex or decimal number filling [s, e); false on anything else or overflow. */
static bool parse_num(const char *s, const char *e, int base, uint64_t *out)
{
	uint64_t v = 0;
	if (s == e)
		return false;
	if (base == 16 && e - s > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	for (; s < e; s++) {
		unsigned d;
		if (*s >= '0' && *s <= '9')
			d = (unsigned)(*s - '0');
		else if (base == 16 && *s >= 'a' && *s <= 'f')
			d = (unsigned)(*s - 'a' + 10);
		else if (base == 16 && *s >= 'A' && *s <= 'F')
			d = (unsigned)(*s - 'A' + 10);
		else
			return false;
		if (v > (UINT64_MAX - d) / (uint64_t)base)
			return false;
		v = v * (uint64_t)base + d;
	}
	*out = v;
	return true;
}

static const char *skip_blank(const char *s, const char *e)
{
	while (s < e && (*s == ' ' || *s == '\t'))
		s++;
	return s;
}

static const char *word_end(const char *s, const char *e)
{
	while (s < e && *s != ' ' && *s != '\t')
		s++;
	return s;
}

/*
 * Scratch memory for the tables and the file's text.  Large ones ask for
 * huge pages (MADV_HUGEPAGE, within the system's THP policy: nothing under
 * "never"; the library's text copies ask the same way): a 200,000-object
 * profile touches about 50 MiB, and taking that a 4 KiB fault at a time
 * was most of the parse on this project's VM (a fault costs about 25 us
 * there: 11,000 faults, 0.3 s; with huge pages, 25).  The tables are
 * written only while the file is parsed, so no fork later copies them on
 * write.  Mappings smaller than a huge page keep small pages; a larger one
 * may use at most one huge page more than small pages would (the one its
 * last touched byte is in).
 */
#define PROFILE_HUGE_MIN (2u << 20)

static void *prof_scratch(size_t len)
{
	void *m = et_scratch_alloc(len);
	if (m && len >= PROFILE_HUGE_MIN) {
		int e = errno;
		(void)et_os_advise(m, len, MADV_HUGEPAGE);   /* advice: a refusal changes nothing */
		errno = e;
	}
	return m;
}

/*
 * The build-id hash, over a build-id zero-padded to 40 bytes (as in
 * et_prof_obj.build_id: hex digits are never 0, so equal padded buffers are
 * equal build-ids), 8 bytes at a time, keyed with a seed that differs in
 * each process (the address of the tables and the clock), then mixed (the
 * finaliser of MurmurHash3).  The key matters: a file of build-ids chosen to
 * collide under a fixed function would make the table a list again.
 */
#define BID_PAD 40
static uint64_t bid_hash(const char *padded, uint64_t seed)
{
	uint64_t h = seed;
	for (size_t i = 0; i < BID_PAD; i += 8) {
		uint64_t w;
		memcpy(&w, padded + i, 8);
		h = (h ^ w) * 0x9e3779b97f4a7c15ull;
		h ^= h >> 32;
	}
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 33;
	return h;
}

/* The slot of a build-id (zero-padded, at least BID_PAD + 1 bytes): the one
 * holding it, or the empty one where it would go; *tag is what a slot
 * holding it has in its upper half. */
static uint64_t *bid_slot(const struct et_profile *p, const char *padded, uint64_t *tag)
{
	uint64_t h = bid_hash(padded, p->seed);
	size_t mask = p->nslots - 1;
	*tag = h & 0xffffffff00000000ull;
	for (size_t i = (size_t)h & mask;; i = (i + 1) & mask) {
		uint64_t v = p->slots[i];
		if (!v)
			return &p->slots[i];
		if ((v & 0xffffffff00000000ull) == *tag &&
		    !memcmp(p->objs[(uint32_t)v - 1].build_id, padded, BID_PAD + 1))
			return &p->slots[i];
	}
}
_Static_assert(sizeof ((struct et_prof_obj *)0)->build_id == BID_PAD + 1, "build-ids of 20 bytes, in hex");

/* Does [l, le) start with the word "object"?  (The first pass's count of
 * the objects a file may have.) */
static bool object_line(const char *l, const char *le)
{
	l = skip_blank(l, le);
	return le - l >= 6 && !memcmp(l, "object", 6);
}

/* The tables' one scratch mapping, sized from a first pass over the text:
 * an object per line that starts with "object", an entry per other line;
 * 0, or -ENOMEM with p->err set and nothing allocated. */
static int parse_alloc(struct et_profile *p, const char *text, size_t len)
{
	size_t lines = 0, olines = 0;
	for (const char *s = text, *end = text + len; s < end;) {
		const char *e = memchr(s, '\n', (size_t)(end - s));
		if (!e)
			e = end;
		lines++;
		olines += object_line(s, e);
		s = e < end ? e + 1 : end;
	}
	size_t ents_max = lines - olines;
	if (olines > PROFILE_MAX_OBJECTS)
		olines = PROFILE_MAX_OBJECTS;   /* the one after those is refused */
	/* at most half full: a miss probes 2.5 slots on average */
	uint64_t nslots = 16;
	while (nslots < 2 * (uint64_t)olines)
		nslots *= 2;
	/* len < 4 GiB: no sum below overflows 64 bits (it may exceed a 32-bit
	 * size_t, then the profile is refused) */
	uint64_t objs_len = olines * (uint64_t)sizeof(struct et_prof_obj);
	uint64_t ents_len = ents_max * (uint64_t)sizeof(struct et_prof_ent);
	uint64_t slots_len = nslots * sizeof(uint64_t);
	uint64_t mem_len = objs_len + ents_len + slots_len + len + 1;
	if (mem_len > SIZE_MAX) {
		set_err(p, 0, "out of memory");
		return -ENOMEM;
	}
	p->mem_len = (size_t)mem_len;
	p->mem = prof_scratch(p->mem_len);
	if (!p->mem) {
		set_err(p, 0, "out of memory");
		return -ENOMEM;
	}
	p->objs = p->mem;
	p->ents = (struct et_prof_ent *)((char *)p->mem + objs_len);
	p->slots = (uint64_t *)((char *)p->mem + objs_len + ents_len);
	p->nslots = (size_t)nslots;
	p->seed = (uint64_t)(uintptr_t)p->mem ^ et_now_ns() * 0x9e3779b97f4a7c15ull;
	/* the paths, each NUL-ended, packed: their lines hold them and their
	 * newlines, so len + 1 bytes are enough; only what they use is touched
	 * (a copy of the whole file would keep its count lines as well) */
	p->paths = (char *)p->mem + objs_len + ents_len + slots_len;
	return 0;
}

/* The header's two lines: [l, le) with its first word ending at w, in
 * *state 0 (want "enormoustext-profile 1") or 1 (want "granule N");
 * false with p->err set when it is not the line wanted. */
static bool parse_header(struct et_profile *p, size_t line, const char *l, const char *w, const char *le,
                         int *state)
{
	size_t wl = (size_t)(w - l);
	const char *n = skip_blank(w, le);
	if (*state == 0) {
		uint64_t v;
		if (wl != 20 || memcmp(l, "enormoustext-profile", 20) || !parse_num(n, word_end(n, le), 10, &v)) {
			set_err(p, line, "not an enormoustext profile (expected \"enormoustext-profile 1\")");
			return false;
		}
		if (v != 1) {
			set_err(p, line, "a profile of another version (this library reads version 1)");
			return false;
		}
		*state = 1;
		return true;
	}
	uint64_t g;
	if (wl != 7 || memcmp(l, "granule", 7) || !parse_num(n, word_end(n, le), 10, &g) || g < 64 ||
	    g > (1u << 30) || (g & (g - 1))) {
		set_err(p, line, "expected \"granule N\", N a power of two from 64 to 1G");
		return false;
	}
	p->granule = g;
	*state = 2;
	return true;
}

/* "object BUILD-ID PATH" (w: the end of "object"): a new object, its
 * build-id into the hash table and its path after the others (*paths_used
 * bytes of p->paths so far); false with p->err set when refused. */
static bool parse_object(struct et_profile *p, size_t line, const char *w, const char *le, size_t *paths_used)
{
	const char *b = skip_blank(w, le), *be = word_end(b, le);
	size_t bl = (size_t)(be - b);
	if (bl < 2 || bl > 40) {
		set_err(p, line, "a build-id of 1 to 20 bytes in hex expected after \"object\"");
		return false;
	}
	for (const char *c = b; c < be; c++)
		if (!is_hex(*c)) {
			set_err(p, line, "a build-id of 1 to 20 bytes in hex expected after \"object\"");
			return false;
		}
	if (p->nobjs == PROFILE_MAX_OBJECTS) {
		set_err(p, line, "more than " PROFILE_MAX_OBJECTS_TEXT " objects");
		return false;
	}
	struct et_prof_obj *o = &p->objs[p->nobjs];
	memset(o, 0, sizeof *o);
	for (size_t i = 0; i < bl; i++)
		o->build_id[i] = (char)(b[i] >= 'A' && b[i] <= 'F' ? b[i] - 'A' + 'a' : b[i]);
	/* o is not in the table yet: a match is an earlier object */
	uint64_t tag, *slot = bid_slot(p, o->build_id, &tag);
	if (*slot) {
		set_err(p, line, "the same build-id twice");
		return false;
	}
	*slot = tag | (uint64_t)(p->nobjs + 1);
	const char *path = skip_blank(be, le);
	o->path_off = (uint32_t)*paths_used;
	o->path_len = (uint32_t)(le - path);
	memcpy(p->paths + *paths_used, path, o->path_len);
	p->paths[*paths_used + o->path_len] = '\0';
	*paths_used += o->path_len + 1;
	o->first = (uint32_t)p->nents;
	p->nobjs++;
	return true;
}

/* "VADDR COUNT" ([l, w) the address): an entry of the last object; false
 * with p->err set when refused. */
static bool parse_count(struct et_profile *p, size_t line, const char *l, const char *w, const char *le)
{
	if (p->nobjs == 0) {
		set_err(p, line, "a count before any \"object\" line");
		return false;
	}
	uint64_t va, cnt;
	const char *n = skip_blank(w, le), *ne = word_end(n, le);
	if (!parse_num(l, w, 16, &va) || !parse_num(n, ne, 10, &cnt) || skip_blank(ne, le) != le) {
		set_err(p, line, "expected \"VADDR COUNT\" (hex address, decimal count)");
		return false;
	}
	if (va & (p->granule - 1)) {
		set_err(p, line, "an address that does not start a granule");
		return false;
	}
	struct et_prof_obj *o = &p->objs[p->nobjs - 1];
	if (o->n && va <= p->ents[p->nents - 1].vaddr) {
		set_err(p, line, "addresses not increasing within the object");
		return false;
	}
	if (o->total > UINT64_MAX - cnt) {
		set_err(p, line, "counts too large");
		return false;
	}
	p->ents[p->nents].vaddr = va;
	p->ents[p->nents].count = cnt;
	p->nents++;
	o->n++;
	o->total += cnt;
	return true;
}

/* Line by line: the header, then object and count lines (parse_header,
 * parse_object, parse_count); on a refusal the tables are freed. */
int et_profile_parse(struct et_profile *p, const char *text, size_t len)
{
	memset(p, 0, sizeof *p);
	if (len == 0) {
		set_err(p, 1, "empty");
		return -EINVAL;
	}
	/* path_off is 32 bits (et_profile_load refuses far less already) */
	if (len >= UINT32_MAX) {
		set_err(p, 1, "too large");
		return -EFBIG;
	}
	int r = parse_alloc(p, text, len);
	if (r)
		return r;
	size_t paths_used = 0;
	const char *s = text, *end = text + len;
	/* the first NUL byte, if any: its line is the first line with one */
	const char *nul = memchr(text, 0, len);
	size_t line = 0;
	int state = 0;            /* 0: want header, 1: want granule, 2: body */
	while (s < end) {
		const char *e = memchr(s, '\n', (size_t)(end - s));
		if (!e)
			e = end;
		line++;
		const char *l = s, *le = e;
		s = e < end ? e + 1 : end;
		if (le > l && le[-1] == '\r')
			le--;
		if (nul && nul >= l && nul < le) {
			set_err(p, line, "a NUL byte");
			goto bad;
		}
		l = skip_blank(l, le);
		if (l == le || *l == '#')
			continue;
		const char *w = word_end(l, le);
		bool ok;
		if (state < 2)
			ok = parse_header(p, line, l, w, le, &state);
		else if (w - l == 6 && !memcmp(l, "object", 6))
			ok = parse_object(p, line, w, le, &paths_used);
		else
			ok = parse_count(p, line, l, w, le);
		if (!ok)
			goto bad;
	}
	if (state < 2) {
		set_err(p, line + 1, state == 0 ? "no \"enormoustext-profile 1\" header" : "no \"granule\" line");
		goto bad;
	}
	return 0;
bad:
	et_scratch_free(p->mem, p->mem_len);
	p->mem = NULL;
	p->objs = NULL;
	p->ents = NULL;
	p->paths = NULL;
	p->slots = NULL;
	p->nslots = 0;
	p->nobjs = p->nents = 0;
	return -EINVAL;
}

int et_profile_load(struct et_profile *p, const char *path)
{
	memset(p, 0, sizeof *p);
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	struct stat st;
	if (fd < 0) {
		int e = errno;
		char eb[24];
		snprintf(p->err, sizeof p->err, "%s", et_errno_text(e, eb));
		return -e;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		snprintf(p->err, sizeof p->err, "not a regular file");
		return -EINVAL;
	}
	if ((uint64_t)st.st_size > PROFILE_MAX_BYTES) {
		close(fd);
		snprintf(p->err, sizeof p->err, "too large (%llu bytes; at most %u)",
		         (unsigned long long)st.st_size, PROFILE_MAX_BYTES);
		return -EFBIG;
	}
	size_t len = (size_t)st.st_size;
	char *buf = prof_scratch(len + 1);
	if (!buf) {
		close(fd);
		snprintf(p->err, sizeof p->err, "out of memory");
		return -ENOMEM;
	}
	long got = et_read_fd(fd, buf, len + 1);
	int e = errno;
	close(fd);
	if (got < 0) {
		char eb[24];
		et_scratch_free(buf, len + 1);
		snprintf(p->err, sizeof p->err, "%s", et_errno_text(e, eb));
		return -e;
	}
	int rc = et_profile_parse(p, buf, (size_t)got);
	et_scratch_free(buf, len + 1);
	return rc;
}

void et_profile_free(struct et_profile *p)
{
	if (p->mem)
		et_scratch_free(p->mem, p->mem_len);
	memset(p, 0, sizeof *p);
}

const struct et_prof_obj *et_profile_find(const struct et_profile *p, const char *build_id)
{
	if (!build_id || !build_id[0] || !p->nslots)
		return NULL;
	char key[BID_PAD + 1] = { 0 };
	size_t n = strnlen(build_id, BID_PAD + 1);
	if (n > BID_PAD)
		return NULL;
	memcpy(key, build_id, n);
	uint64_t tag, v = *bid_slot(p, key, &tag);
	return v ? &p->objs[(uint32_t)v - 1] : NULL;
}

const char *et_profile_path(const struct et_profile *p, const struct et_prof_obj *o)
{
	return p->paths ? p->paths + o->path_off : "";
}

/* Samples of object o in [lo, hi) of its address space (binary search: the
 * addresses are increasing). */
uint64_t et_profile_heat(const struct et_profile *p, const struct et_prof_obj *o, uint64_t lo, uint64_t hi)
{
	const struct et_prof_ent *e = p->ents + o->first;
	size_t a = 0, b = o->n;
	while (a < b) {
		size_t m = a + (b - a) / 2;
		if (e[m].vaddr < lo)
			a = m + 1;
		else
			b = m;
	}
	uint64_t sum = 0;
	for (size_t i = a; i < o->n && e[i].vaddr < hi; i++)
		sum += e[i].count;
	return sum;
}

/* ------------------------------------------------------------- writing */

static void wput(struct et_prof_writer *w, const char *s, size_t n)
{
	et_sink_put(&w->out, s, n);
}

#define wlit(w, s) wput((w), "" s, sizeof(s) - 1)

/* Text that ends its line: a newline or CR in it would end it early. */
static void wtext(struct et_prof_writer *w, const char *s)
{
	const char *run = s;
	for (; *s; s++)
		if (*s == '\n' || *s == '\r') {
			wput(w, run, (size_t)(s - run));
			wlit(w, "?");
			run = s + 1;
		}
	wput(w, run, (size_t)(s - run));
}

void et_profile_write_begin(struct et_prof_writer *w, const struct et_sink *out, uint64_t granule,
                            const char *comment)
{
	memset(w, 0, sizeof *w);
	w->out = *out;
	w->out.len = 0;
	w->granule = granule;
	wlit(w, "enormoustext-profile 1\ngranule ");
	et_sink_u64(&w->out, granule, 10);
	wlit(w, "\n");
	if (comment) {
		wlit(w, "# ");
		wtext(w, comment);
		wlit(w, "\n");
	}
}

int et_profile_write_object(struct et_prof_writer *w, const char *build_id, const char *path)
{
	size_t n = strlen(build_id);
	bool ok = n >= 2 && n <= BID_PAD;
	for (size_t i = 0; ok && i < n; i++)
		ok = is_hex(build_id[i]);
	w->in_object = ok;
	w->any = false;
	if (!ok)
		return -EINVAL;
	wlit(w, "object ");
	wput(w, build_id, n);
	wlit(w, " ");
	wtext(w, path);
	wlit(w, "\n");
	return 0;
}

int et_profile_write_count(struct et_prof_writer *w, uint64_t vaddr, uint64_t count)
{
	if (!w->in_object || (vaddr & (w->granule - 1)) || (w->any && vaddr <= w->last))
		return -EINVAL;
	w->last = vaddr;
	w->any = true;
	et_sink_u64(&w->out, vaddr, 16);
	wlit(w, " ");
	et_sink_u64(&w->out, count, 10);
	wlit(w, "\n");
	return 0;
}

void et_profile_write_end(struct et_prof_writer *w)
{
	et_sink_flush(&w->out);
}

/* ---------------------------------------------------------------- merge */

/* An object of one of the profiles. */
struct mref {
	uint32_t p, o;
};

/* Build-id order (the padded build-ids compare as strcmp would), then the
 * profiles' order: a group of equal build-ids starts with the first
 * profile that has it. */
static int mref_cmp(const struct et_profile *ps, struct mref a, struct mref b)
{
	int c = memcmp(ps[a.p].objs[a.o].build_id, ps[b.p].objs[b.o].build_id, BID_PAD + 1);
	if (c)
		return c;
	if (a.p != b.p)
		return a.p < b.p ? -1 : 1;
	return a.o < b.o ? -1 : a.o > b.o;
}

static void mref_sift(const struct et_profile *ps, struct mref *r, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, m = i;
		if (l < n && mref_cmp(ps, r[l], r[m]) > 0)
			m = l;
		if (l + 1 < n && mref_cmp(ps, r[l + 1], r[m]) > 0)
			m = l + 1;
		if (m == i)
			return;
		struct mref t = r[i];
		r[i] = r[m];
		r[m] = t;
		i = m;
	}
}

/* Heapsort: no allocation, O(n log n) whatever the input. */
static void mref_sort(const struct et_profile *ps, struct mref *r, size_t n)
{
	for (size_t i = n / 2; i-- > 0;)
		mref_sift(ps, r, n, i);
	for (size_t e = n; e-- > 1;) {
		struct mref t = r[0];
		r[0] = r[e];
		r[e] = t;
		mref_sift(ps, r, e, 0);
	}
}

/* The heads of one object's entry lists, a min-heap on their address. */
struct mheap {
	const struct et_profile *ps;
	const struct mref *g;      /* the group: the object in each profile */
	uint32_t *pos;             /* pos[k]: the next entry of g[k] */
	uint32_t *h;               /* the heap: indexes into g */
	size_t n;
};

static const struct et_prof_ent *mhead(const struct mheap *m, uint32_t k)
{
	const struct et_profile *p = &m->ps[m->g[k].p];
	return &p->ents[p->objs[m->g[k].o].first + m->pos[k]];
}

static void mheap_down(struct mheap *m, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, s = i;
		if (l < m->n && mhead(m, m->h[l])->vaddr < mhead(m, m->h[s])->vaddr)
			s = l;
		if (l + 1 < m->n && mhead(m, m->h[l + 1])->vaddr < mhead(m, m->h[s])->vaddr)
			s = l + 1;
		if (s == i)
			return;
		uint32_t t = m->h[i];
		m->h[i] = m->h[s];
		m->h[s] = t;
		i = s;
	}
}

struct prof_merge_ctx {
	const struct et_profile *ps;
	struct mref *refs;
	uint32_t *pos, *heap;
	struct et_prof_writer *w;
};

/* The counts of the group refs[first, first + count) (one object, in
 * each profile that has it), summed granule by granule, in address order. */
static void merge_object(struct prof_merge_ctx *c, size_t first, size_t count)
{
	struct mheap m = { .ps = c->ps, .g = c->refs + first, .pos = c->pos, .h = c->heap, .n = 0 };
	for (uint32_t k = 0; k < count; k++) {
		m.pos[k] = 0;
		if (c->ps[m.g[k].p].objs[m.g[k].o].n)
			m.h[m.n++] = k;
	}
	for (size_t i = m.n / 2; i-- > 0;)
		mheap_down(&m, i);
	while (m.n) {
		uint64_t va = mhead(&m, m.h[0])->vaddr, sum = 0;
		while (m.n && mhead(&m, m.h[0])->vaddr == va) {
			uint32_t k = m.h[0];
			uint64_t add = mhead(&m, k)->count;
			sum = sum > UINT64_MAX - add ? UINT64_MAX : sum + add;
			if (++m.pos[k] == c->ps[m.g[k].p].objs[m.g[k].o].n)
				m.h[0] = m.h[--m.n];
			mheap_down(&m, 0);
		}
		(void)et_profile_write_count(c->w, va, sum);
	}
}

int et_profile_merge(const struct et_profile *ps, size_t n, const struct et_sink *out, const char *comment)
{
	if (n == 0 || n > UINT32_MAX)
		return -EINVAL;
	size_t nobjs = 0;
	for (size_t i = 0; i < n; i++) {
		if (ps[i].granule != ps[0].granule)
			return -EINVAL;
		nobjs += ps[i].nobjs;
	}
	size_t len = nobjs * (sizeof(struct mref) + 2 * sizeof(uint32_t));
	void *mem = nobjs ? et_scratch_alloc(len) : NULL;
	if (nobjs && !mem)
		return -ENOMEM;
	struct prof_merge_ctx c = { .ps = ps, .refs = mem };
	c.pos = (uint32_t *)(void *)(c.refs + nobjs);
	c.heap = c.pos + nobjs;
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		for (size_t o = 0; o < ps[i].nobjs; o++)
			c.refs[k++] = (struct mref){ (uint32_t)i, (uint32_t)o };
	mref_sort(ps, c.refs, nobjs);

	struct et_prof_writer w;
	c.w = &w;
	et_profile_write_begin(&w, out, ps[0].granule, comment);
	for (size_t a = 0, b; a < nobjs; a = b) {
		const struct et_profile *p = &ps[c.refs[a].p];
		const struct et_prof_obj *o = &p->objs[c.refs[a].o];
		for (b = a + 1; b < nobjs && !memcmp(ps[c.refs[b].p].objs[c.refs[b].o].build_id, o->build_id,
		                                     BID_PAD + 1); b++)
			;
		(void)et_profile_write_object(&w, o->build_id, et_profile_path(p, o));
		merge_object(&c, a, b - a);
	}
	et_profile_write_end(&w);
	et_scratch_free(mem, len);
	return 0;
}
