/*
 * common.c — the JSON writer and small text helpers of the command.
 *
 * JSON strings are written valid whatever the input: paths are bytes, not
 * necessarily UTF-8, so a byte that does not start or continue a valid UTF-8
 * sequence is written as \u00XX (its Latin-1 reading) instead of passing
 * through and making the document invalid.
 */
#include "tool.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------- JSON */

void et_json_init(struct et_json *j, FILE *f)
{
	memset(j, 0, sizeof *j);
	j->f = f;
}

static void indent(struct et_json *j)
{
	fputc('\n', j->f);
	for (int i = 0; i < j->depth; i++)
		fputs("  ", j->f);
}

/* Length of the valid UTF-8 sequence at s (1..4), or 0 if it is not one. */
static size_t utf8_len(const unsigned char *s)
{
	unsigned c = s[0];
	size_t n;
	unsigned min;
	if (c < 0x80)
		return 1;
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
			return 0;
		cp = (cp << 6) | (s[i] & 0x3F);
	}
	if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
		return 0;
	return n;
}

static void put_string(FILE *f, const char *s)
{
	fputc('"', f);
	const unsigned char *p = (const unsigned char *)s;
	while (*p) {
		unsigned c = *p;
		if (c == '"' || c == '\\') {
			fputc('\\', f);
			fputc((int)c, f);
			p++;
		} else if (c == '\n') {
			fputs("\\n", f);
			p++;
		} else if (c == '\t') {
			fputs("\\t", f);
			p++;
		} else if (c < 0x20 || c == 0x7F) {
			fprintf(f, "\\u%04x", c);
			p++;
		} else if (c < 0x80) {
			fputc((int)c, f);
			p++;
		} else {
			size_t n = utf8_len(p);
			if (n == 0) {
				fprintf(f, "\\u%04x", c);
				p++;
			} else {
				fwrite(p, 1, n, f);
				p += n;
			}
		}
	}
	fputc('"', f);
}

static void member(struct et_json *j, const char *key)
{
	if (j->depth > 0) {
		if (j->need_comma[j->depth])
			fputc(',', j->f);
		indent(j);
	}
	if (j->depth < (int)(sizeof j->need_comma / sizeof *j->need_comma))
		j->need_comma[j->depth] = true;
	if (key) {
		put_string(j->f, key);
		fputs(": ", j->f);
	}
}

static void open_(struct et_json *j, const char *key, char c)
{
	member(j, key);
	fputc(c, j->f);
	if (j->depth + 1 < (int)(sizeof j->need_comma / sizeof *j->need_comma)) {
		j->depth++;
		j->need_comma[j->depth] = false;
	}
}

static void close_(struct et_json *j, char c)
{
	bool had = j->need_comma[j->depth];
	if (j->depth > 0)
		j->depth--;
	if (had)
		indent(j);
	fputc(c, j->f);
}

void et_json_obj(struct et_json *j, const char *key) { open_(j, key, '{'); }
void et_json_obj_end(struct et_json *j) { close_(j, '}'); }
void et_json_arr(struct et_json *j, const char *key) { open_(j, key, '['); }
void et_json_arr_end(struct et_json *j) { close_(j, ']'); }

void et_json_str(struct et_json *j, const char *key, const char *val)
{
	member(j, key);
	if (val)
		put_string(j->f, val);
	else
		fputs("null", j->f);
}

void et_json_u64(struct et_json *j, const char *key, uint64_t v)
{
	member(j, key);
	fprintf(j->f, "%llu", (unsigned long long)v);
}

void et_json_i64(struct et_json *j, const char *key, int64_t v)
{
	member(j, key);
	fprintf(j->f, "%lld", (long long)v);
}

void et_json_bool(struct et_json *j, const char *key, bool v)
{
	member(j, key);
	fputs(v ? "true" : "false", j->f);
}

void et_json_null(struct et_json *j, const char *key)
{
	member(j, key);
	fputs("null", j->f);
}

void et_json_end(struct et_json *j)
{
	fputc('\n', j->f);
	fflush(j->f);
}

/* ------------------------------------------------------------ formats */

const char *et_tool_size(char *buf, size_t cap, uint64_t b)
{
	static const char units[] = "KMGT";
	if (b == 0) {
		snprintf(buf, cap, "0");
		return buf;
	}
	if (b < 1024) {
		snprintf(buf, cap, "%lluB", (unsigned long long)b);
		return buf;
	}
	int u = 0;
	uint64_t unit = 1024;
	while (u < 3 && b >= unit * 1024) {
		unit *= 1024;
		u++;
	}
	if (b % unit == 0)
		snprintf(buf, cap, "%llu%c", (unsigned long long)(b / unit), units[u]);
	else
		snprintf(buf, cap, "%.1f%c", (double)b / (double)unit, units[u]);
	return buf;
}

char *et_tool_trim(char *s)
{
	size_t n = strlen(s);
	while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
		s[--n] = '\0';
	return s;
}

long et_tool_read(const char *path, char *buf, size_t cap)
{
	long n = et_read_file(path, buf, cap);
	if (n < 0) {
		if (cap)
			buf[0] = '\0';
		return n;
	}
	et_tool_trim(buf);
	return (long)strlen(buf);
}

int et_tool_parse_u64(const char *s, uint64_t *out)
{
	uint64_t v = 0;
	if (!s || !*s)
		return -EINVAL;
	for (const char *p = s; *p; p++) {
		if (*p < '0' || *p > '9')
			return -EINVAL;
		uint64_t d = (uint64_t)(*p - '0');
		if (v > (UINT64_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}
