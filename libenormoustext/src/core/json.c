/*
 * core/json.c — the JSON writer.
 *
 * Owns: how JSON is written, for the library's report (runtime/report.c)
 * and every --json of the command: the layout (commas, indentation, flat
 * containers), the escaping of strings (valid JSON whatever the bytes: a
 * byte outside a valid UTF-8 sequence becomes \u00XX), and numbers.
 * May call: util (the sink).
 * Never: allocates with malloc, uses a stdio stream or printf's family
 * (the library writes its report from the constructor's path), keeps state
 * outside struct et_json.
 */
#include "core/json.h"

#include <string.h>

#define BIT(d) (1u << (d))

void et_json_begin(struct et_json *j, const struct et_sink *out)
{
	memset(j, 0, sizeof *j);
	j->out = *out;
	j->out.len = 0;
}

static void put(struct et_json *j, const char *s, size_t n)
{
	et_sink_put(&j->out, s, n);
}

#define put_lit(j, s) put((j), "" s, sizeof(s) - 1)

static void indent(struct et_json *j)
{
	static const char spaces[] = "                                ";   /* 32 */
	put_lit(j, "\n");
	for (int n = 2 * j->depth; n > 0; n -= (int)sizeof spaces - 1)
		put(j, spaces, n < (int)sizeof spaces - 1 ? (size_t)n : sizeof spaces - 1);
}

/* Length of the valid UTF-8 sequence at s (2..4), or 0 if it is not one. */
static size_t utf8_len(const unsigned char *s)
{
	unsigned c = s[0];
	size_t n;
	unsigned min;
	if (c >= 0xC2 && c <= 0xDF) {
		n = 2;
		min = 0x80;
	} else if (c >= 0xE0 && c <= 0xEF) {
		n = 3;
		min = 0x800;
	} else if (c >= 0xF0 && c <= 0xF4) {
		n = 4;
		min = 0x10000;
	} else {
		return 0;
	}
	unsigned cp = c & (0x7F >> n);
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xC0) != 0x80)
			return 0;    /* (the NUL at the end stops here too) */
		cp = (cp << 6) | (s[i] & 0x3F);
	}
	if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
		return 0;
	return n;
}

static void put_string(struct et_json *j, const char *str)
{
	static const char hx[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)str, *run = p;
	put_lit(j, "\"");
	for (;;) {
		unsigned c = *p;
		size_t n = 1;
		/* printable ASCII and valid UTF-8 go out in runs, as they are */
		if (c >= 0x20 && c < 0x7F && c != '"' && c != '\\') {
			p++;
			continue;
		}
		if (c >= 0x80 && (n = utf8_len(p)) > 0) {
			p += n;
			continue;
		}
		put(j, (const char *)run, (size_t)(p - run));
		if (c == 0)
			break;
		if (c == '"' || c == '\\') {
			char e[2] = { '\\', (char)c };
			put(j, e, 2);
		} else {
			char e[6] = { '\\', 'u', '0', '0', hx[c >> 4], hx[c & 15] };
			put(j, e, 6);
		}
		run = ++p;
	}
	put_lit(j, "\"");
}

/* Before a value: the comma and the line (or the ", ") that separate it
 * from the one before, and its key. */
static void member(struct et_json *j, const char *key)
{
	int d = j->depth;
	if (d > 0) {
		if (j->flat & BIT(d)) {
			if (j->more & BIT(d))
				put_lit(j, ", ");
		} else {
			if (j->more & BIT(d))
				put_lit(j, ",");
			indent(j);
		}
	}
	j->more |= BIT(d);
	if (key) {
		put_string(j, key);
		put_lit(j, ": ");
	}
}

static void open_(struct et_json *j, const char *key, char c, bool flat)
{
	member(j, key);
	put(j, &c, 1);
	if (j->depth + 1 < ET_JSON_MAX_DEPTH) {
		bool f = flat || (j->flat & BIT(j->depth));
		j->depth++;
		j->more &= ~BIT(j->depth);
		j->flat = f ? j->flat | BIT(j->depth) : j->flat & ~BIT(j->depth);
	}
}

static void close_(struct et_json *j, char c)
{
	bool had = j->more & BIT(j->depth), flat = j->flat & BIT(j->depth);
	if (j->depth > 0)
		j->depth--;
	if (had && !flat)
		indent(j);
	put(j, &c, 1);
}

void et_json_obj(struct et_json *j, const char *key) { open_(j, key, '{', false); }
void et_json_obj_flat(struct et_json *j, const char *key) { open_(j, key, '{', true); }
void et_json_obj_end(struct et_json *j) { close_(j, '}'); }
void et_json_arr(struct et_json *j, const char *key) { open_(j, key, '[', false); }
void et_json_arr_end(struct et_json *j) { close_(j, ']'); }

void et_json_str(struct et_json *j, const char *key, const char *val)
{
	member(j, key);
	if (val)
		put_string(j, val);
	else
		put_lit(j, "null");
}

void et_json_u64(struct et_json *j, const char *key, uint64_t v)
{
	member(j, key);
	et_sink_u64(&j->out, v, 10);
}

void et_json_i64(struct et_json *j, const char *key, int64_t v)
{
	member(j, key);
	if (v < 0)
		put_lit(j, "-");
	/* -(INT64_MIN) does not fit an int64_t; it does a uint64_t */
	et_sink_u64(&j->out, v < 0 ? 0 - (uint64_t)v : (uint64_t)v, 10);
}

void et_json_hex(struct et_json *j, const char *key, uint64_t v)
{
	member(j, key);
	put_lit(j, "\"0x");
	et_sink_u64(&j->out, v, 16);
	put_lit(j, "\"");
}

void et_json_bool(struct et_json *j, const char *key, bool v)
{
	member(j, key);
	if (v)
		put_lit(j, "true");
	else
		put_lit(j, "false");
}

void et_json_milli(struct et_json *j, const char *key, int64_t v)
{
	member(j, key);
	uint64_t a = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
	if (v < 0)
		put_lit(j, "-");
	et_sink_u64(&j->out, a / 1000, 10);
	const char frac[4] = { '.', (char)('0' + a / 100 % 10), (char)('0' + a / 10 % 10), (char)('0' + a % 10) };
	put(j, frac, sizeof frac);
}

void et_json_null(struct et_json *j, const char *key)
{
	member(j, key);
	put_lit(j, "null");
}

void et_json_end(struct et_json *j)
{
	put_lit(j, "\n");
	et_sink_flush(&j->out);
}
