/*
 * json_flat — check that a file is valid JSON (RFC 8259) and print it flat:
 *
 *   json_flat FILE
 *
 * one line per scalar:  PATH <TAB> TYPE <TAB> VALUE
 * e.g.  .objects[1].huge_bytes	number	8388608
 *       .objects[1].path	string	/tmp/x/libbigtext.so
 * (strings decoded; a newline or tab inside one is printed as \n / \t), so
 * a shell script can grep what it needs.  Exit 0 when the file is valid JSON,
 * 1 (with the offset and the reason on stderr) when it is not, 2 when it
 * cannot be read.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *src, *p, *end;
static char path[8192];

static void bad(const char *why)
{
	fprintf(stderr, "json_flat: not valid JSON at byte %ld: %s\n", (long)(p - src), why);
	exit(1);
}

static void ws(void)
{
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
		p++;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static void put_utf8(char **o, unsigned long cp)
{
	char *q = *o;

	if (cp < 0x80) {
		*q++ = (char)cp;
	} else if (cp < 0x800) {
		*q++ = (char)(0xC0 | (cp >> 6));
		*q++ = (char)(0x80 | (cp & 0x3F));
	} else if (cp < 0x10000) {
		*q++ = (char)(0xE0 | (cp >> 12));
		*q++ = (char)(0x80 | ((cp >> 6) & 0x3F));
		*q++ = (char)(0x80 | (cp & 0x3F));
	} else {
		*q++ = (char)(0xF0 | (cp >> 18));
		*q++ = (char)(0x80 | ((cp >> 12) & 0x3F));
		*q++ = (char)(0x80 | ((cp >> 6) & 0x3F));
		*q++ = (char)(0x80 | (cp & 0x3F));
	}
	*o = q;
}

static unsigned long hex4(void)
{
	unsigned long v = 0;
	int i;

	for (i = 0; i < 4; i++) {
		int h = p < end ? hexval((unsigned char)*p) : -1;
		if (h < 0)
			bad("bad \\u escape");
		v = v * 16 + (unsigned long)h;
		p++;
	}
	return v;
}

/* Parse a string at p (which is at the opening quote); return it decoded in a
 * malloc'd buffer. */
static char *string(void)
{
	char *out = malloc((size_t)(end - p) * 2 + 8), *o = out;

	if (!out) {
		fprintf(stderr, "json_flat: out of memory\n");
		exit(2);
	}
	p++;
	for (;;) {
		unsigned char c;

		if (p >= end)
			bad("unterminated string");
		c = (unsigned char)*p++;
		if (c == '"')
			break;
		if (c < 0x20)
			bad("control character in string");
		if (c != '\\') {
			*o++ = (char)c;
			continue;
		}
		if (p >= end)
			bad("unterminated escape");
		c = (unsigned char)*p++;
		switch (c) {
		case '"': *o++ = '"'; break;
		case '\\': *o++ = '\\'; break;
		case '/': *o++ = '/'; break;
		case 'b': *o++ = '\b'; break;
		case 'f': *o++ = '\f'; break;
		case 'n': *o++ = '\n'; break;
		case 'r': *o++ = '\r'; break;
		case 't': *o++ = '\t'; break;
		case 'u': {
			unsigned long cp = hex4();
			if (cp >= 0xD800 && cp < 0xDC00) {
				unsigned long lo;
				if (end - p < 2 || p[0] != '\\' || p[1] != 'u')
					bad("lone high surrogate");
				p += 2;
				lo = hex4();
				if (lo < 0xDC00 || lo > 0xDFFF)
					bad("bad low surrogate");
				cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
			} else if (cp >= 0xDC00 && cp < 0xE000) {
				bad("lone low surrogate");
			}
			put_utf8(&o, cp);
			break;
		}
		default:
			bad("bad escape");
		}
	}
	*o = 0;
	return out;
}

static void emit(const char *type, const char *val, size_t len)
{
	size_t i;

	printf("%s\t%s\t", path[0] ? path : ".", type);
	for (i = 0; i < len; i++) {
		if (val[i] == '\n')
			fputs("\\n", stdout);
		else if (val[i] == '\t')
			fputs("\\t", stdout);
		else
			putchar(val[i]);
	}
	putchar('\n');
}

static void value(int depth);

static void push(size_t *save, const char *key, long index)
{
	size_t len = strlen(path);
	int r;

	*save = len;
	if (key)
		r = snprintf(path + len, sizeof path - len, ".%s", key);
	else
		r = snprintf(path + len, sizeof path - len, "[%ld]", index);
	if (r < 0 || (size_t)r >= sizeof path - len)
		bad("nesting too deep (path too long)");
}

static void value(int depth)
{
	size_t save;

	if (depth > 200)
		bad("nesting too deep");
	ws();
	if (p >= end)
		bad("unexpected end of input");
	if (*p == '{') {
		p++;
		ws();
		if (p < end && *p == '}') {
			p++;
			emit("object", "{}", 2);
			return;
		}
		for (;;) {
			char *key;

			ws();
			if (p >= end || *p != '"')
				bad("expected a string key");
			key = string();
			ws();
			if (p >= end || *p != ':')
				bad("expected ':'");
			p++;
			push(&save, key, 0);
			free(key);
			value(depth + 1);
			path[save] = 0;
			ws();
			if (p < end && *p == ',') {
				p++;
				continue;
			}
			if (p < end && *p == '}') {
				p++;
				return;
			}
			bad("expected ',' or '}'");
		}
	} else if (*p == '[') {
		long i = 0;

		p++;
		ws();
		if (p < end && *p == ']') {
			p++;
			emit("array", "[]", 2);
			return;
		}
		for (;; i++) {
			push(&save, NULL, i);
			value(depth + 1);
			path[save] = 0;
			ws();
			if (p < end && *p == ',') {
				p++;
				continue;
			}
			if (p < end && *p == ']') {
				p++;
				return;
			}
			bad("expected ',' or ']'");
		}
	} else if (*p == '"') {
		char *s = string();
		emit("string", s, strlen(s));
		free(s);
	} else if (*p == '-' || (*p >= '0' && *p <= '9')) {
		const char *s = p;

		if (*p == '-')
			p++;
		if (p < end && *p == '0')
			p++;
		else if (p < end && *p >= '1' && *p <= '9')
			while (p < end && *p >= '0' && *p <= '9')
				p++;
		else
			bad("bad number");
		if (p < end && *p == '.') {
			p++;
			if (p >= end || *p < '0' || *p > '9')
				bad("bad fraction");
			while (p < end && *p >= '0' && *p <= '9')
				p++;
		}
		if (p < end && (*p == 'e' || *p == 'E')) {
			p++;
			if (p < end && (*p == '+' || *p == '-'))
				p++;
			if (p >= end || *p < '0' || *p > '9')
				bad("bad exponent");
			while (p < end && *p >= '0' && *p <= '9')
				p++;
		}
		emit("number", s, (size_t)(p - s));
	} else if (end - p >= 4 && !strncmp(p, "true", 4)) {
		p += 4;
		emit("bool", "true", 4);
	} else if (end - p >= 5 && !strncmp(p, "false", 5)) {
		p += 5;
		emit("bool", "false", 5);
	} else if (end - p >= 4 && !strncmp(p, "null", 4)) {
		p += 4;
		emit("null", "null", 4);
	} else {
		bad("unexpected character");
	}
}

int main(int argc, char **argv)
{
	FILE *f;
	char *buf;
	size_t cap = 1 << 16, len = 0, n;

	if (argc != 2) {
		fprintf(stderr, "usage: json_flat FILE\n");
		return 2;
	}
	f = fopen(argv[1], "rb");
	if (!f) {
		fprintf(stderr, "json_flat: %s: %s\n", argv[1], strerror(errno));
		return 2;
	}
	buf = malloc(cap);
	while (buf && (n = fread(buf + len, 1, cap - len, f)) > 0) {
		len += n;
		if (len == cap)
			buf = realloc(buf, cap *= 2);
	}
	if (!buf || ferror(f)) {
		fprintf(stderr, "json_flat: %s: read error\n", argv[1]);
		return 2;
	}
	fclose(f);
	src = p = buf;
	end = buf + len;
	if (len >= 3 && !memcmp(buf, "\xEF\xBB\xBF", 3))
		bad("byte order mark");
	value(0);
	ws();
	if (p != end)
		bad("trailing characters after the top-level value");
	return 0;
}
