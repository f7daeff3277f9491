/*
 * profile.c — hot-text profiles (ENORMOUSTEXT_PROFILE): the file format and
 * its parser.  The choice of windows from a profile is in init.c.
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
 * The parser takes a buffer and allocates nothing but one scratch mapping
 * for its tables; every malformed line is an error naming the line.  It is
 * the part a hostile file reaches, and the fuzz target's subject.
 */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#define PROFILE_MAX_BYTES (64u << 20)    /* larger is "enormous": refused */

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

int et_profile_parse(struct et_profile *p, const char *text, size_t len)
{
	memset(p, 0, sizeof *p);
	if (len == 0) {
		set_err(p, 1, "empty");
		return -EINVAL;
	}
	/* Upper bounds for the tables: one entry or object per line. */
	size_t lines = 1;
	for (size_t i = 0; i < len; i++)
		lines += text[i] == '\n';
	size_t objs_len = lines * sizeof(struct et_prof_obj);
	size_t ents_len = lines * sizeof(struct et_prof_ent);
	p->mem_len = objs_len + ents_len + len + 1;
	p->mem = et_scratch_alloc(p->mem_len);
	if (!p->mem) {
		set_err(p, 0, "out of memory");
		return -ENOMEM;
	}
	p->objs = p->mem;
	p->ents = (struct et_prof_ent *)((char *)p->mem + objs_len);
	p->paths = (char *)p->mem + objs_len + ents_len;
	memcpy(p->paths, text, len);
	p->paths[len] = '\0';

	const char *s = text, *end = text + len;
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
		if (le > l && memchr(l, 0, (size_t)(le - l))) {
			set_err(p, line, "a NUL byte");
			goto bad;
		}
		l = skip_blank(l, le);
		if (l == le || *l == '#')
			continue;
		const char *w = word_end(l, le);
		size_t wl = (size_t)(w - l);
		if (state == 0) {
			uint64_t v;
			const char *n = skip_blank(w, le);
			if (wl != 20 || memcmp(l, "enormoustext-profile", 20) ||
			    !parse_num(n, word_end(n, le), 10, &v)) {
				set_err(p, line, "not an enormoustext profile (expected \"enormoustext-profile 1\")");
				goto bad;
			}
			if (v != 1) {
				set_err(p, line, "a profile of another version (this library reads version 1)");
				goto bad;
			}
			state = 1;
			continue;
		}
		if (state == 1) {
			uint64_t g;
			const char *n = skip_blank(w, le);
			if (wl != 7 || memcmp(l, "granule", 7) || !parse_num(n, word_end(n, le), 10, &g) ||
			    g < 64 || g > (1u << 30) || (g & (g - 1))) {
				set_err(p, line, "expected \"granule N\", N a power of two from 64 to 1G");
				goto bad;
			}
			p->granule = g;
			state = 2;
			continue;
		}
		if (wl == 6 && !memcmp(l, "object", 6)) {
			const char *b = skip_blank(w, le), *be = word_end(b, le);
			size_t bl = (size_t)(be - b);
			if (bl < 2 || bl > 40) {
				set_err(p, line, "a build-id of 1 to 20 bytes in hex expected after \"object\"");
				goto bad;
			}
			for (const char *c = b; c < be; c++)
				if (!is_hex(*c)) {
					set_err(p, line, "a build-id of 1 to 20 bytes in hex expected after \"object\"");
					goto bad;
				}
			struct et_prof_obj *o = &p->objs[p->nobjs];
			memset(o, 0, sizeof *o);
			for (size_t i = 0; i < bl; i++)
				o->build_id[i] = (char)(b[i] >= 'A' && b[i] <= 'F' ? b[i] - 'A' + 'a' : b[i]);
			for (size_t k = 0; k < p->nobjs; k++)
				if (!strcmp(p->objs[k].build_id, o->build_id)) {
					set_err(p, line, "the same build-id twice");
					goto bad;
				}
			const char *path = skip_blank(be, le);
			o->path_off = (uint32_t)(path - text);
			o->path_len = (uint32_t)(le - path);
			p->paths[o->path_off + o->path_len] = '\0';
			o->first = (uint32_t)p->nents;
			p->nobjs++;
			continue;
		}
		/* VADDR COUNT */
		if (p->nobjs == 0) {
			set_err(p, line, "a count before any \"object\" line");
			goto bad;
		}
		uint64_t va, cnt;
		const char *n = skip_blank(w, le), *ne = word_end(n, le);
		if (!parse_num(l, w, 16, &va) || !parse_num(n, ne, 10, &cnt) || skip_blank(ne, le) != le) {
			set_err(p, line, "expected \"VADDR COUNT\" (hex address, decimal count)");
			goto bad;
		}
		if (va & (p->granule - 1)) {
			set_err(p, line, "an address that does not start a granule");
			goto bad;
		}
		struct et_prof_obj *o = &p->objs[p->nobjs - 1];
		if (o->n && va <= p->ents[p->nents - 1].vaddr) {
			set_err(p, line, "addresses not increasing within the object");
			goto bad;
		}
		if (o->total > UINT64_MAX - cnt) {
			set_err(p, line, "counts too large");
			goto bad;
		}
		p->ents[p->nents].vaddr = va;
		p->ents[p->nents].count = cnt;
		p->nents++;
		o->n++;
		o->total += cnt;
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
	char *buf = et_scratch_alloc(len + 1);
	if (!buf) {
		close(fd);
		snprintf(p->err, sizeof p->err, "out of memory");
		return -ENOMEM;
	}
	size_t got = 0;
	while (got < len) {
		ssize_t r = read(fd, buf + got, len - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	int rc = et_profile_parse(p, buf, got);
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
	if (!build_id || !build_id[0])
		return NULL;
	for (size_t i = 0; i < p->nobjs; i++)
		if (!strcmp(p->objs[i].build_id, build_id))
			return &p->objs[i];
	return NULL;
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
