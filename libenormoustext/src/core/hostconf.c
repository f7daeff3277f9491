/*
 * core/hostconf.c — the host's settings file (`enormoustext enable
 * --all`): see core/hostconf.h for its form.
 *
 * Owns: the file's grammar (names, the two program lists, what the host
 * may not set); the rule for trusting the host-wide files.
 * May call: options (the table's names).
 * Never: reads a file, allocates, calls libc (every process of a host
 * runs it at start, where each first call of a libc function costs a lazy
 * binding).
 */
#include "core/hostconf.h"

ET_STARTUP static bool blank(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\r';
}

ET_STARTUP static bool same(const char *a, const char *b)
{
	for (; *a && *a == *b; a++, b++)
		;
	return *a == *b;
}

ET_STARTUP bool et_hostconf_settable(int id)
{
	return id >= 0 && id < ET_OPT__COUNT && id != ET_OPT_REPORT && id != ET_OPT_RECORD &&
	       id != ET_OPT_TOP_ONLY;
}

ET_STARTUP const char *et_hostwide_untrusted(const struct stat *st, bool dir)
{
	if (dir ? !S_ISDIR(st->st_mode) : !S_ISREG(st->st_mode))
		return dir ? "not a directory" : "not a regular file";
	if (st->st_uid != 0)
		return "not owned by root";
	if (st->st_mode & (S_IWGRP | S_IWOTH))
		return "writable by group or others";
	return NULL;
}

/* One line [s, e): trimmed, split at '=', and used. */
ET_STARTUP static void line(char *s, char *e, int no, struct et_hostconf *c)
{
	while (s < e && blank(*s))
		s++;
	while (e > s && blank(e[-1]))
		e--;
	if (s == e || *s == '#')
		return;
	char *eq = s;
	while (eq < e && *eq != '=')
		eq++;
	if (eq == e || eq == s) {
		if (!c->bad_line)
			c->bad_line = no;
		return;
	}
	char *ne = eq, *v = eq + 1;
	while (ne > s && blank(ne[-1]))
		ne--;
	while (v < e && blank(*v))
		v++;
	*ne = '\0';
	*e = '\0';
	bool progs = same(s, ET_HOSTCONF_PROGRAMS), excl = same(s, ET_HOSTCONF_EXCLUDE);
	if ((progs || excl) && !*v) {
		if (!c->bad_line)
			c->bad_line = no;
		return;
	}
	if (progs) {
		c->programs = v;
		c->nset++;
		return;
	}
	if (excl) {
		c->exclude = v;
		c->nset++;
		return;
	}
	size_t n;
	const struct et_option_desc *t = et_option_table(&n);
	for (size_t id = 0; id < n && id < ET_OPT__COUNT; id++) {
		if (!same(s, t[id].name))
			continue;
		if (!et_hostconf_settable((int)id)) {
			if (!c->refused_line)
				c->refused_line = no;
			return;
		}
		if (!c->val[id])
			c->nset++;
		c->val[id] = v;
		return;
	}
	if (!c->bad_line)
		c->bad_line = no;
}

ET_STARTUP void et_hostconf_parse(char *buf, struct et_hostconf *c)
{
	for (int id = 0; id < ET_OPT__COUNT; id++)
		c->val[id] = NULL;
	c->programs = c->exclude = NULL;
	c->bad_line = c->refused_line = c->nset = 0;
	int no = 1;
	char *s = buf;
	for (char *p = buf;; p++) {
		if (*p == '\n' || *p == '\0') {
			bool end = *p == '\0';
			line(s, p, no++, c);
			if (end)
				break;
			s = p + 1;
		}
	}
}
