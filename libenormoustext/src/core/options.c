/*
 * core/options.c — the environment variables, as data.
 *
 * Owns: THE table of the ENORMOUSTEXT_* variables (each one's name, default,
 * what it accepts, its help): the only place that holds a default — the
 * parser starts from the table's defaults, read as the environment's values
 * are, and so does the command (et_options_defaults); one parser per kind
 * of value (on/off, integer range, size with K/M/G, duration, backend name,
 * globs, path).  A bad value produces exactly one warning naming the
 * variable and what it accepts, and the default stays.
 * May call: util, log.
 * Never: reads the environment itself (its caller's getenv-like function
 * does: the library reads it once, at start-up, safe in a constructor);
 * allocates; writes a default anywhere but the table.
 */
#include "core/options.h"

#include "core/log.h"
#include "core/util.h"

#include <errno.h>
#include <fnmatch.h>
#include <string.h>

static const struct et_option_desc table[ET_OPT__COUNT] = {
	[ET_OPT_ENABLE] = { "ENORMOUSTEXT", "1", "1/0, on/off, yes/no, true/false",
		"0 turns the library off entirely" },
	[ET_OPT_VERBOSE] = { "ENORMOUSTEXT_VERBOSE", "0", "an integer 0..3",
		"0 silent, 1 one summary line, 2 a line per object, 3 debug" },
	[ET_OPT_BACKEND] = { "ENORMOUSTEXT_BACKEND", "auto", "auto, file, thp, collapse, hugetlb",
		"file: zero-copy; thp/collapse/hugetlb: copies; auto: file, then copies" },
	[ET_OPT_INCLUDE] = { "ENORMOUSTEXT_INCLUDE", "", "colon-separated globs on object paths",
		"only objects matching one of these globs" },
	[ET_OPT_EXCLUDE] = { "ENORMOUSTEXT_EXCLUDE", "", "colon-separated globs on object paths",
		"skip objects matching one of these globs" },
	[ET_OPT_MIN_BYTES] = { "ENORMOUSTEXT_MIN_BYTES", "0", "a size in bytes with optional K/M/G suffix",
		"skip objects with less eligible text than this" },
	[ET_OPT_REPORT] = { "ENORMOUSTEXT_REPORT", "", "a writable file path",
		"write a JSON report of what was done to this file" },
	[ET_OPT_PAD_THRESHOLD] = { "ENORMOUSTEXT_PAD_THRESHOLD", "4096",
		"a size in bytes with optional K/M/G suffix",
		"pad a partial first/last window holding more text than this; 0 never" },
	[ET_OPT_PERFMAP] = { "ENORMOUSTEXT_PERFMAP", "0", "1/0, on/off, yes/no, true/false",
		"write /tmp/perf-PID.map naming the functions in moved text, for perf" },
	[ET_OPT_PRIME] = { "ENORMOUSTEXT_PRIME", "auto", "auto, 1/0, on/off, yes/no, true/false",
		"re-read copied windows into the page cache huge: zero-copy next" },
	[ET_OPT_PROFILE] = { "ENORMOUSTEXT_PROFILE", "", "a readable profile file path",
		"move only the hot windows this profile names" },
	[ET_OPT_HOT_COVERAGE] = { "ENORMOUSTEXT_HOT_COVERAGE", "95", "a percentage 1..100",
		"with a profile: the hottest windows covering this share of samples" },
	[ET_OPT_HOT_BUDGET] = { "ENORMOUSTEXT_HOT_BUDGET", "0", "a size in bytes with optional K/M/G suffix",
		"with a profile: at most this much text moved; 0 no limit" },
	[ET_OPT_PROFILE_STRICT] = { "ENORMOUSTEXT_PROFILE_STRICT", "0", "1/0, on/off, yes/no, true/false",
		"with a profile: leave alone the objects it does not have" },
	[ET_OPT_RECORD] = { "ENORMOUSTEXT_RECORD", "", "a writable file path",
		"sample this process; write a profile here at exit (%p: pid)" },
	[ET_OPT_DEFER] = { "ENORMOUSTEXT_DEFER", "1s", "a duration: 0, or an integer with ms or s",
		"move text on a worker thread once the process has lived this long" },
	[ET_OPT_DEFER_RATE] = { "ENORMOUSTEXT_DEFER_RATE", "0", "an integer (MiB/s), 0 no limit",
		"with ENORMOUSTEXT_DEFER: the worker copies at most this many MiB/s" },
	[ET_OPT_HOT] = { "ENORMOUSTEXT_HOT", "off", "auto, off",
		"auto: sample during ENORMOUSTEXT_DEFER, then move the hot windows only" },
	[ET_OPT_TOP_ONLY] = { "ENORMOUSTEXT_TOP_ONLY", "0", "1/0, on/off, yes/no, true/false",
		"this process only: the programs it starts do not get the preload" },
	[ET_OPT_MODE] = { "ENORMOUSTEXT_MODE", "1", "1 (file text), 2 (JIT code), 3 (both)",
		"1 file text, 2 anonymous executable memory (JIT code), 3 both" },
	[ET_OPT_SECCOMP] = { "ENORMOUSTEXT_SECCOMP", "avoid", "avoid, trust",
		"trust: act under a seccomp filter known to allow the library's calls" },
	[ET_OPT_COPY_MIN] = { "ENORMOUSTEXT_COPY_MIN", "256K", "a size in bytes with optional K/M/G suffix",
		"a deferred pass copies only windows with this much run; 0: every one" },
	[ET_OPT_DEFER_ON] = { "ENORMOUSTEXT_DEFER_ON", "main", "main, thread",
		"main: on the program's own thread while it is alone; thread: a worker" },
};

ET_STARTUP const struct et_option_desc *et_option_table(size_t *count)
{
	if (count)
		*count = ET_OPT__COUNT;
	return table;
}

/* Variables of the project that are not the library's options: the
 * command's own (`enormoustext run` reads ENORMOUSTEXT_LIB), so that a user
 * who exports them gets no warning from every process. */
static const char other_vars[][24] = {
	ET_OPTION_LIB_VAR,
};

/* Does entry ("NAME=value") name exactly `name`? */
static bool entry_is(const char *entry, const char *name)
{
	while (*name && *entry == *name) {
		entry++;
		name++;
	}
	return *name == '\0' && (*entry == '=' || *entry == '\0');
}

ET_STARTUP bool et_option_known(const char *entry)
{
	for (int id = 0; id < ET_OPT__COUNT; id++)
		if (entry_is(entry, table[id].name))
			return true;
	for (size_t i = 0; i < sizeof other_vars / sizeof *other_vars; i++)
		if (entry_is(entry, other_vars[i]))
			return true;
	return false;
}

const char *et_option_nearest(const char *name)
{
	const char *best = table[0].name;
	unsigned bd = ~0u;
	for (int id = 0; id < ET_OPT__COUNT; id++) {
		unsigned d = et_edit_distance(name, table[id].name, true);
		if (d < bd) {
			bd = d;
			best = table[id].name;
		}
	}
	/* a suggestion only when it is near: a few letters off */
	return bd <= 4 ? best : NULL;
}

static bool ieq(const char *a, const char *b)
{
	for (; *a && *b; a++, b++) {
		char x = *a, y = *b;
		if (x >= 'A' && x <= 'Z') x = (char)(x - 'A' + 'a');
		if (y >= 'A' && y <= 'Z') y = (char)(y - 'A' + 'a');
		if (x != y)
			return false;
	}
	return *a == *b;
}

ET_STARTUP int et_parse_bool(const char *s, bool *out)
{
	static const char yes[][9] = { "1", "on", "yes", "true", "enable", "enabled" };
	static const char no[][9] = { "0", "off", "no", "false", "disable", "disabled" };
	for (size_t i = 0; i < sizeof yes / sizeof *yes; i++) {
		if (ieq(s, yes[i])) { *out = true; return 0; }
		if (ieq(s, no[i])) { *out = false; return 0; }
	}
	return -EINVAL;
}

ET_STARTUP int et_parse_size(const char *s, uint64_t *out)
{
	uint64_t v = 0;
	const char *p = s;
	if (*p < '0' || *p > '9')
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		uint64_t d = (uint64_t)(*p - '0');
		if (v > (UINT64_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	unsigned shift = 0;
	switch (*p) {
	case 'k': case 'K': shift = 10; p++; break;
	case 'm': case 'M': shift = 20; p++; break;
	case 'g': case 'G': shift = 30; p++; break;
	default: break;
	}
	if (shift && (*p == 'i' || *p == 'I') && (p[1] == 'B' || p[1] == 'b'))
		p += 2;           /* accept KiB/MiB/GiB */
	else if (shift && (*p == 'B' || *p == 'b'))
		p++;              /* and KB/MB/GB */
	if (*p)
		return -EINVAL;
	if (shift && v > (UINT64_MAX >> shift))
		return -ERANGE;
	*out = v << shift;
	return 0;
}

static const char backend_names[ET_BACKEND__COUNT][9] = {
	[ET_BACKEND_AUTO] = "auto", [ET_BACKEND_FILE] = "file", [ET_BACKEND_THP] = "thp",
	[ET_BACKEND_COLLAPSE] = "collapse", [ET_BACKEND_HUGETLB] = "hugetlb",
	[ET_BACKEND_NONE] = "none",
};

const char *et_backend_name(enum et_backend b)
{
	return (unsigned)b < ET_BACKEND__COUNT ? backend_names[b] : "?";
}

ET_STARTUP int et_parse_backend(const char *s, enum et_backend *out)
{
	for (int b = 0; b < ET_BACKEND_NONE; b++) {
		if (ieq(s, backend_names[b])) {
			*out = (enum et_backend)b;
			return 0;
		}
	}
	return -EINVAL;
}

ET_STARTUP int et_parse_duration(const char *s, uint64_t *ns)
{
	if (s[0] == '0' && s[1] == '\0') {
		*ns = 0;
		return 0;
	}
	uint64_t n = 0;
	const char *p = s;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (n > 86400000)
			return -EINVAL;
		n = n * 10 + (uint64_t)(*p - '0');
	}
	if (p == s)
		return -EINVAL;
	uint64_t unit;
	if (p[0] == 'm' && p[1] == 's' && p[2] == '\0')
		unit = 1000000;
	else if (p[0] == 's' && p[1] == '\0')
		unit = 1000000000;
	else
		return -EINVAL;
	if (n * (unit / 1000000) > 86400000)   /* a day, in ms */
		return -EINVAL;
	*ns = n * unit;
	return 0;
}

/* A glob list is valid when it has at least one non-empty element. */
ET_STARTUP static bool glob_list_valid(const char *s)
{
	for (; *s; s++)
		if (*s != ':')
			return true;
	return false;
}

/*
 * fnmatch(3) with no flags, on the pattern [p, pe), written out: it runs on
 * the start-up path of every process of the host (`enable --all
 * --programs/--exclude-programs`), where libc's fnmatch cost two page
 * faults and a lazy binding.  The same language, byte by byte as in the C
 * locale: '*', '?', '\\' escapes, brackets with '!' or '^', ranges and a
 * leading ']', an unclosed '[' literal; '*', '?' and brackets match '/'
 * and a leading '.' too.  A pattern with a class, an equivalence class or
 * a collating symbol ("[:", "[=", "[.") goes to libc's fnmatch instead
 * (unit test glob/fnmatch compares the two).
 */
ET_STARTUP static bool has_class(const char *p, const char *pe)
{
	for (; p + 1 < pe; p++)
		if (p[0] == '[' && (p[1] == ':' || p[1] == '=' || p[1] == '.'))
			return true;
	return false;
}

/* A bracket at p (just after '['): its end (after ']') and whether c is
 * in it; NULL when it is not closed. */
ET_STARTUP static const char *bracket(const char *p, const char *pe, unsigned char c, bool *in)
{
	bool neg = p < pe && (*p == '!' || *p == '^');
	if (neg)
		p++;
	bool hit = false, first = true;
	while (p < pe && (*p != ']' || first)) {
		first = false;
		unsigned char lo = (unsigned char)*p++;
		if (lo == '\\') {
			if (p == pe)
				return NULL;
			lo = (unsigned char)*p++;
		}
		unsigned char hi = lo;
		if (p + 1 < pe && p[0] == '-' && p[1] != ']') {
			p++;
			hi = (unsigned char)*p++;
			if (hi == '\\') {
				if (p == pe)
					return NULL;
				hi = (unsigned char)*p++;
			}
		}
		if (c >= lo && c <= hi)
			hit = true;
	}
	if (p == pe)
		return NULL;
	*in = hit != neg;
	return p + 1;
}

ET_STARTUP static bool glob_match(const char *p, const char *pe, const char *s)
{
	const char *star = NULL, *resume = NULL;
	for (;;) {
		if (p < pe && *p == '*') {
			while (p < pe && *p == '*')
				p++;
			star = p;
			resume = s;
			continue;
		}
		if (*s == '\0' && p == pe)
			return true;
		bool ok = false;
		const char *next = p + 1;
		if (p < pe && *s != '\0') {
			unsigned char c = (unsigned char)*s;
			if (*p == '?') {
				ok = true;
			} else if (*p == '[') {
				bool in = false;
				const char *e = bracket(p + 1, pe, c, &in);
				if (e) {
					ok = in;
					next = e;
				} else {
					ok = c == '[';
				}
			} else if (*p == '\\') {
				ok = p + 1 < pe && (unsigned char)p[1] == c;
				next = p + 2;
			} else {
				ok = (unsigned char)*p == c;
			}
		}
		if (ok) {
			p = next;
			s++;
			continue;
		}
		/* backtrack: the last '*' takes one more character */
		if (!star || *resume == '\0')
			return false;
		p = star;
		s = ++resume;
	}
}

ET_STARTUP bool et_glob_match(const char *p, size_t n, const char *s)
{
	if (has_class(p, p + n)) {
		char pat[512];
		if (n >= sizeof pat)
			return false;
		memcpy(pat, p, n);
		pat[n] = '\0';
		return fnmatch(pat, s, 0) == 0;
	}
	return glob_match(p, p + n, s);
}

ET_STARTUP bool et_glob_list_match(const char *globs, const char *path)
{
	const char *base = path;
	for (const char *q = path; *q; q++)
		if (*q == '/')
			base = q + 1;
	const char *p = globs;
	while (*p) {
		const char *e = p;
		while (*e && *e != ':')
			e++;
		size_t n = (size_t)(e - p);
		if (n > 0 && n < 512 && (et_glob_match(p, n, path) || et_glob_match(p, n, base)))
			return true;
		if (!*e)
			break;
		p = e + 1;
	}
	return false;
}

/* One value v for option id into o: 0, or -errno (o as it was).  The
 * table's defaults go through here too, so the table is the only place
 * that knows them; given: v came from the environment (not the table). */
ET_STARTUP static int apply(struct et_options *o, enum et_option_id id, const char *v, bool given)
{
	int ok = 0;
	switch (id) {
	case ET_OPT_ENABLE:
		ok = et_parse_bool(v, &o->enabled);
		break;
	case ET_OPT_VERBOSE: {
		uint64_t n;
		ok = (v[0] && et_parse_size(v, &n) == 0 && n <= 3 && strlen(v) == 1) ? 0 : -EINVAL;
		if (ok == 0) {
			o->verbose = (int)n;
			o->verbose_set = given;
		}
		break;
	}
	case ET_OPT_BACKEND:
		ok = et_parse_backend(v, &o->backend);
		break;
	case ET_OPT_INCLUDE:
	case ET_OPT_EXCLUDE:
		/* Empty means "not set"; a list of only colons is a mistake. */
		if (!*v)
			break;
		if (!glob_list_valid(v)) {
			ok = -EINVAL;
			break;
		}
		if (id == ET_OPT_INCLUDE)
			o->include = v;
		else
			o->exclude = v;
		break;
	case ET_OPT_MIN_BYTES:
		ok = et_parse_size(v, &o->min_bytes);
		break;
	case ET_OPT_PAD_THRESHOLD:
		ok = et_parse_size(v, &o->pad_threshold);
		break;
	case ET_OPT_REPORT:
		if (*v)
			o->report = v;
		break;
	case ET_OPT_PERFMAP:
		ok = et_parse_bool(v, &o->perfmap);
		break;
	case ET_OPT_PRIME:
		/* auto: clean files on local file systems only, tried again later
		 * while other processes still map the small pages; 1: also write
		 * a file's dirty pages out first (runtime/remap.c) */
		if (!strcmp(v, "auto")) {
			o->prime = true;
			o->prime_sync = false;
		} else {
			ok = et_parse_bool(v, &o->prime);
			o->prime_sync = o->prime;
		}
		break;
	case ET_OPT_PROFILE:
		if (*v)
			o->profile = v;
		break;
	case ET_OPT_HOT_COVERAGE: {
		uint64_t n;
		size_t l = strlen(v);
		char num[8];
		/* "95" or "95%" */
		if (l > 0 && v[l - 1] == '%')
			l--;
		ok = -EINVAL;
		if (l > 0 && l < sizeof num) {
			memcpy(num, v, l);
			num[l] = '\0';
			if (num[0] >= '0' && num[0] <= '9' && et_parse_size(num, &n) == 0 && n >= 1 && n <= 100 &&
			    num[l - 1] >= '0' && num[l - 1] <= '9') {
				o->hot_coverage = (unsigned)n;
				ok = 0;
			}
		}
		break;
	}
	case ET_OPT_HOT_BUDGET:
		ok = et_parse_size(v, &o->hot_budget);
		break;
	case ET_OPT_PROFILE_STRICT:
		ok = et_parse_bool(v, &o->profile_strict);
		break;
	case ET_OPT_RECORD:
		if (*v)
			o->record = v;
		break;
	case ET_OPT_DEFER:
		ok = et_parse_duration(v, &o->defer_ns);
		break;
	case ET_OPT_DEFER_RATE: {
		/* MiB/s, digits only: 0 or 1..1,000,000 */
		uint64_t n = 0;
		ok = *v ? 0 : -EINVAL;
		for (const char *p = v; *p && ok == 0; p++)
			if (*p < '0' || *p > '9' || (n = n * 10 + (uint64_t)(*p - '0')) > 1000000)
				ok = -EINVAL;
		if (ok == 0)
			o->defer_rate = n << 20;
		break;
	}
	case ET_OPT_HOT:
		if (!strcmp(v, "auto"))
			o->hot_auto = true;
		else if (!strcmp(v, "off") || !*v)
			o->hot_auto = false;
		else
			ok = -EINVAL;
		break;
	case ET_OPT_TOP_ONLY:
		ok = et_parse_bool(v, &o->top_only);
		break;
	case ET_OPT_MODE:
		if ((v[0] == '1' || v[0] == '2' || v[0] == '3') && !v[1])
			o->mode = (unsigned)(v[0] - '0');
		else
			ok = -EINVAL;
		break;
	case ET_OPT_COPY_MIN:
		ok = et_parse_size(v, &o->copy_min);
		break;
	case ET_OPT_DEFER_ON:
		if (!strcmp(v, "main"))
			o->defer_main = true;
		else if (!strcmp(v, "thread") || !*v)
			o->defer_main = false;
		else
			ok = -EINVAL;
		break;
	case ET_OPT_SECCOMP:
		if (!strcmp(v, "trust"))
			o->seccomp_trust = true;
		else if (!strcmp(v, "avoid") || !*v)
			o->seccomp_trust = false;
		else
			ok = -EINVAL;
		break;
	case ET_OPT__COUNT:
		break;
	}
	return ok;
}

ET_STARTUP int et_options_parse(struct et_options *o, et_getenv_fn get, et_warn_fn warn, void *ctx)
{
	int bad = 0;
	memset(o, 0, sizeof *o);
	/* the defaults: the table's, read as the environment's values are
	 * (the unit tests check that each one parses) */
	for (int id = 0; id < ET_OPT__COUNT; id++)
		(void)apply(o, (enum et_option_id)id, table[id].def, false);

	for (int id = 0; id < ET_OPT__COUNT; id++) {
		const char *v = get(table[id].name, ctx);
		if (!v)
			continue;
		if (apply(o, (enum et_option_id)id, v, true) != 0) {
			bad++;
			if (warn)
				warn(table[id].name, v, table[id].accepts, ctx);
		}
	}
	return bad;
}

static const char *no_env(const char *name, void *ctx)
{
	(void)name;
	(void)ctx;
	return NULL;
}

ET_STARTUP void et_options_defaults(struct et_options *o)
{
	(void)et_options_parse(o, no_env, NULL, NULL);
}
