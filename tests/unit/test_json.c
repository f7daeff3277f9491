/*
 * test_json.c — the JSON writer (core/json.c) the report and the command
 * share: the escaping of each kind of byte (exact bytes: a wrong escape
 * fails), random byte strings decoded back (against the C library's own
 * UTF-8 decoder), the layout of nested, empty and flat containers, numbers
 * at their limits, and the sink (a small buffer gives the same bytes as
 * none; an et_out sink writes the file).
 */
#include "unit_util.h"

#include "core/json.h"
#include "core/outfile.h"

#include <locale.h>
#include <wchar.h>

TestSuite(json, .timeout = 30, .fini = ut_cleanup);

/* ------------------------------------------------------- a memory sink */

struct mem {
	char *buf;
	size_t len, cap;
	int flushes, writes;
};

static void mem_write(void *ctx, const char *s, size_t n)
{
	struct mem *m = ctx;
	if (m->len + n + 1 > m->cap) {
		m->cap = (m->len + n + 1) * 2;
		m->buf = realloc(m->buf, m->cap);
		cr_assert_not_null(m->buf);
	}
	memcpy(m->buf + m->len, s, n);
	m->len += n;
	m->buf[m->len] = '\0';
	m->writes++;
}

static void mem_flush(void *ctx)
{
	((struct mem *)ctx)->flushes++;
}

/* A writer into m, through a buffer of cap bytes (0: none). */
static void start(struct et_json *j, struct mem *m, char *buf, size_t cap)
{
	memset(m, 0, sizeof *m);
	struct et_sink s = { .write = mem_write, .flush = mem_flush, .ctx = m, .buf = buf, .cap = cap };
	et_json_begin(j, &s);
}

/* The document a single string value makes. */
static char *string_doc(const char *s)
{
	struct et_json j;
	struct mem m;
	start(&j, &m, NULL, 0);
	et_json_str(&j, NULL, s);
	et_json_end(&j);
	cr_assert_eq(m.flushes, 1);
	return m.buf;
}

static void expect_string(const char *in, const char *want)
{
	char *got = string_doc(in);
	char w[256];
	snprintf(w, sizeof w, "\"%s\"\n", want);
	cr_expect_str_eq(got, w, "escaping %s", want);
	free(got);
}

/* ------------------------------------------------------------ escaping */

Test(json, escapes_each_kind_of_byte)
{
	expect_string("plain /usr/lib/libc.so.6", "plain /usr/lib/libc.so.6");
	expect_string("", "");
	expect_string("a\"b", "a\\\"b");
	expect_string("a\\b", "a\\\\b");
	expect_string("/ stays", "/ stays");
	/* every control character as \u00XX, lower-case hex; DEL too */
	expect_string("t\tn\nr\r", "t\\u0009n\\u000ar\\u000d");
	expect_string("\x01\x1f", "\\u0001\\u001f");
	expect_string("\x7f", "\\u007f");
	expect_string(" ~", " ~");
	/* valid UTF-8 passes as it is: 2, 3 and 4 bytes, the largest code point */
	expect_string("caf\xc3\xa9", "caf\xc3\xa9");
	expect_string("\xe2\x82\xac", "\xe2\x82\xac");
	expect_string("\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80");
	expect_string("\xf4\x8f\xbf\xbf", "\xf4\x8f\xbf\xbf");
	/* bytes that are not valid UTF-8: each as \u00XX (its Latin-1 reading) */
	expect_string("\x80", "\\u0080");                          /* a lone continuation */
	expect_string("\xc0\x80", "\\u00c0\\u0080");               /* overlong NUL */
	expect_string("\xc1\xbf", "\\u00c1\\u00bf");               /* overlong */
	expect_string("\xe0\x80\xaf", "\\u00e0\\u0080\\u00af");    /* overlong '/' */
	expect_string("\xed\xa0\x80", "\\u00ed\\u00a0\\u0080");    /* a surrogate */
	expect_string("\xf4\x90\x80\x80", "\\u00f4\\u0090\\u0080\\u0080");   /* past U+10FFFF */
	expect_string("\xf5\x80", "\\u00f5\\u0080");
	expect_string("\xff", "\\u00ff");
	expect_string("x\xe2\x82", "x\\u00e2\\u0082");             /* cut short at the end */
	expect_string("\xe2\x82x", "\\u00e2\\u0082x");             /* cut short by ASCII */
	expect_string("\xc3\xa9\xc3", "\xc3\xa9\\u00c3");          /* a valid one, then half */
}

Test(json, keys_are_escaped_like_values)
{
	struct et_json j;
	struct mem m;
	start(&j, &m, NULL, 0);
	et_json_obj(&j, NULL);
	et_json_str(&j, "k\"\n", "v");
	et_json_obj_end(&j);
	et_json_end(&j);
	cr_expect_str_eq(m.buf, "{\n  \"k\\\"\\u000a\": \"v\"\n}\n");
	free(m.buf);
}

/* Decode a JSON string at *p (after its opening quote) into code points;
 * false on anything a strict parser would refuse. */
static bool decode(const char **p, wchar_t *out, size_t *n, size_t cap)
{
	mbstate_t st;
	memset(&st, 0, sizeof st);
	*n = 0;
	const char *s = *p;
	while (*s != '"') {
		unsigned c = (unsigned char)*s;
		if (c < 0x20 || *n == cap)
			return false;
		if (c == '\\') {
			s++;
			if (*s == '"' || *s == '\\' || *s == '/') {
				out[(*n)++] = (wchar_t)*s++;
			} else if (*s == 'u') {
				char hex[5] = { 0 };
				memcpy(hex, s + 1, 4);
				for (int k = 0; k < 4; k++)
					if (!strchr("0123456789abcdefABCDEF", hex[k]) || !hex[k])
						return false;
				out[(*n)++] = (wchar_t)strtoul(hex, NULL, 16);
				s += 5;
			} else if (*s && strchr("bfnrt", *s)) {
				static const char from[] = "bfnrt", to[] = "\b\f\n\r\t";
				out[(*n)++] = (wchar_t)to[strchr(from, *s) - from];
				s++;
			} else {
				return false;
			}
			continue;
		}
		wchar_t w;
		size_t k = mbrtowc(&w, s, 4, &st);
		if (k == 0 || k > 4)
			return false;      /* invalid UTF-8 in the output */
		out[(*n)++] = w;
		s += k;
	}
	*p = s + 1;
	return true;
}

/* What a byte string means, by the rule: each valid UTF-8 sequence is its
 * code point (as the C library decodes it, within RFC 3629's range: glibc
 * also takes the old 5- and 6-byte forms past U+10FFFF), any other byte its
 * Latin-1 one. */
static size_t meaning(const unsigned char *s, size_t len, wchar_t *out)
{
	size_t n = 0;
	mbstate_t st;
	for (size_t i = 0; i < len;) {
		memset(&st, 0, sizeof st);
		wchar_t w;
		size_t k = s[i] ? mbrtowc(&w, (const char *)s + i, len - i, &st) : (size_t)-1;
		if (k == (size_t)-1 || k == (size_t)-2 || k == 0 || (uint32_t)w > 0x10FFFF ||
		    ((uint32_t)w >= 0xD800 && (uint32_t)w <= 0xDFFF)) {
			out[n++] = s[i++];
		} else {
			out[n++] = w;
			i += k;
		}
	}
	return n;
}

Test(json, random_bytes_decode_back)
{
	if (!setlocale(LC_CTYPE, "C.UTF-8"))
		cr_skip_test("no C.UTF-8 locale here to decode with");
	uint64_t x = 0x9e3779b97f4a7c15ull;
	static const unsigned char pick[] = { 'a', '"', '\\', '\n', 0x01, 0x7f, 0x80, 0xbf, 0xc2, 0xc3,
	                                      0xe0, 0xe2, 0xed, 0xf0, 0xf4, 0xf5, 0xff, 0xa9, 0x82, 0x9f };
	for (int round = 0; round < 3000; round++) {
		unsigned char in[32];
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		size_t len = (size_t)(x % 24);
		for (size_t i = 0; i < len; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			in[i] = (x >> 8) & 1 ? pick[(x >> 16) % sizeof pick] : (unsigned char)(x >> 24);
			if (!in[i])
				in[i] = 'z';
		}
		in[len] = '\0';
		char *doc = string_doc((const char *)in);
		const char *p = doc;
		cr_assert_eq(*p, '"');
		p++;
		wchar_t got[64], want[64];
		size_t ng;
		cr_assert(decode(&p, got, &ng, 64), "round %d: not a valid JSON string: %s", round, doc);
		cr_assert_str_eq(p, "\n", "round %d: after the string: %s", round, p);
		size_t nw = meaning(in, len, want);
		cr_assert_eq(ng, nw, "round %d: %zu code points, expected %zu: %s", round, ng, nw, doc);
		for (size_t i = 0; i < ng; i++)
			cr_assert_eq(got[i], want[i], "round %d, code point %zu: U+%04x, expected U+%04x (%s)",
			             round, i, (unsigned)got[i], (unsigned)want[i], doc);
		free(doc);
	}
}

/* -------------------------------------------------------------- layout */

/* One document using every kind of value and container. */
static void every_kind(struct et_json *j)
{
	et_json_obj(j, NULL);
	et_json_str(j, "s", "x");
	et_json_str(j, "none", NULL);
	et_json_null(j, "null");
	et_json_bool(j, "t", true);
	et_json_bool(j, "f", false);
	et_json_arr(j, "empty_arr");
	et_json_arr_end(j);
	et_json_obj(j, "empty_obj");
	et_json_obj_end(j);
	et_json_obj(j, "nested");
	et_json_arr(j, "list");
	et_json_u64(j, NULL, 1);
	et_json_obj(j, NULL);
	et_json_i64(j, "neg", -5);
	et_json_obj_end(j);
	et_json_arr_end(j);
	et_json_obj_end(j);
	et_json_arr(j, "rows");
	et_json_obj_flat(j, NULL);
	et_json_str(j, "a", "1");
	et_json_hex(j, "at", 0x7f00);
	et_json_arr(j, "in");
	et_json_str(j, NULL, "p");
	et_json_str(j, NULL, "q");
	et_json_arr_end(j);
	et_json_arr(j, "none");
	et_json_arr_end(j);
	et_json_obj_end(j);
	et_json_obj_flat(j, NULL);
	et_json_obj_end(j);
	et_json_arr_end(j);
	et_json_obj_end(j);
	et_json_end(j);
}

static const char every_kind_text[] =
	"{\n"
	"  \"s\": \"x\",\n"
	"  \"none\": null,\n"
	"  \"null\": null,\n"
	"  \"t\": true,\n"
	"  \"f\": false,\n"
	"  \"empty_arr\": [],\n"
	"  \"empty_obj\": {},\n"
	"  \"nested\": {\n"
	"    \"list\": [\n"
	"      1,\n"
	"      {\n"
	"        \"neg\": -5\n"
	"      }\n"
	"    ]\n"
	"  },\n"
	"  \"rows\": [\n"
	"    {\"a\": \"1\", \"at\": \"0x7f00\", \"in\": [\"p\", \"q\"], \"none\": []},\n"
	"    {}\n"
	"  ]\n"
	"}\n";

Test(json, layout_nested_empty_flat)
{
	struct et_json j;
	struct mem m;
	start(&j, &m, NULL, 0);
	every_kind(&j);
	cr_expect_str_eq(m.buf, every_kind_text);
	cr_expect_eq(m.flushes, 1);
	free(m.buf);
}

Test(json, a_list_at_the_top)
{
	struct et_json j;
	struct mem m;
	start(&j, &m, NULL, 0);
	et_json_arr(&j, NULL);
	et_json_obj(&j, NULL);
	et_json_u64(&j, "a", 1);
	et_json_obj_end(&j);
	et_json_obj(&j, NULL);
	et_json_obj_end(&j);
	et_json_arr_end(&j);
	et_json_end(&j);
	cr_expect_str_eq(m.buf, "[\n  {\n    \"a\": 1\n  },\n  {}\n]\n");
	free(m.buf);
}

Test(json, deeper_than_the_limit_stays_balanced)
{
	struct et_json j;
	struct mem m;
	start(&j, &m, NULL, 0);
	for (int i = 0; i < ET_JSON_MAX_DEPTH + 8; i++)
		et_json_arr(&j, NULL);
	for (int i = 0; i < ET_JSON_MAX_DEPTH + 8; i++)
		et_json_arr_end(&j);
	et_json_end(&j);
	size_t open = 0, close = 0;
	for (const char *p = m.buf; *p; p++) {
		open += *p == '[';
		close += *p == ']';
	}
	cr_expect_eq(open, (size_t)ET_JSON_MAX_DEPTH + 8);
	cr_expect_eq(close, open);
	free(m.buf);
}

/* ------------------------------------------------------------- numbers */

Test(json, numbers_at_their_limits)
{
	struct et_json j;
	struct mem m;
	start(&j, &m, NULL, 0);
	et_json_arr(&j, NULL);
	et_json_obj_flat(&j, NULL);
	et_json_u64(&j, "u0", 0);
	et_json_u64(&j, "u", 1234567890123ull);
	et_json_u64(&j, "umax", UINT64_MAX);
	et_json_i64(&j, "i0", 0);
	et_json_i64(&j, "neg", -42);
	et_json_i64(&j, "imin", INT64_MIN);
	et_json_i64(&j, "imax", INT64_MAX);
	et_json_hex(&j, "h0", 0);
	et_json_hex(&j, "h", 0xdeadbeef);
	et_json_hex(&j, "hmax", UINT64_MAX);
	et_json_obj_end(&j);
	et_json_arr_end(&j);
	et_json_end(&j);
	cr_expect_str_eq(m.buf,
	                 "[\n  {\"u0\": 0, \"u\": 1234567890123, \"umax\": 18446744073709551615, \"i0\": 0, "
	                 "\"neg\": -42, \"imin\": -9223372036854775808, \"imax\": 9223372036854775807, "
	                 "\"h0\": \"0x0\", \"h\": \"0xdeadbeef\", \"hmax\": \"0xffffffffffffffff\"}\n]\n");
	free(m.buf);
}

/* ---------------------------------------------------------------- sink */

Test(json, a_small_buffer_gives_the_same_bytes)
{
	for (size_t cap = 1; cap <= 64; cap = cap * 2 + 1) {
		char buf[64];
		struct et_json j;
		struct mem m;
		start(&j, &m, buf, cap);
		every_kind(&j);
		cr_expect_str_eq(m.buf, every_kind_text, "through a buffer of %zu bytes", cap);
		cr_expect_eq(m.flushes, 1);
		/* whole buffers, not pieces: the writes are about len / cap */
		cr_expect_leq((size_t)m.writes, m.len / cap + 1, "%d writes of %zu bytes through %zu", m.writes,
		              m.len, cap);
		free(m.buf);
	}
}

Test(json, through_an_et_out)
{
	char dir[PATH_MAX], path[PATH_MAX + 16];
	ut_tmpdir(dir, sizeof dir);
	snprintf(path, sizeof path, "%s/doc.json", dir);
	struct et_out o;
	cr_assert_eq(et_out_open(&o, path, 0), 0);
	char buf[16];
	struct et_sink s;
	et_out_sink(&s, &o, buf, sizeof buf);
	struct et_json j;
	et_json_begin(&j, &s);
	every_kind(&j);
	cr_assert_eq(et_out_commit(&o), 0);
	size_t len;
	char *text = ut_read(path, &len);
	cr_assert_not_null(text);
	cr_expect_str_eq(text, every_kind_text);
	free(text);
	ut_rmtree(dir);
}
