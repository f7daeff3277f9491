/*
 * tools/enormoustext/prom.c — the Prometheus text exposition format
 * (version 0.0.4, what node_exporter's textfile collector reads): metric
 * families with their # HELP and # TYPE lines, samples with labels, and
 * the escaping the format asks for.
 *
 *   # HELP NAME text        backslash and newline escaped (\\, \n)
 *   # TYPE NAME gauge|counter
 *   NAME{label="value",...} 123
 *
 * Label values escape backslash, double quote and newline (\\, \", \n);
 * every other byte is written as it is (the format is UTF-8; a path that is
 * not stays as the kernel gave it).
 *
 * Owns: the exposition format.
 * May call: stdio.
 * Never: decides which metrics there are (stat.c does), or checks that a
 * family's samples are written together (the caller writes them so).
 */
#include "tool.h"

#include <string.h>

void et_prom_family(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s ", name);
	for (const char *p = help; *p; p++) {
		if (*p == '\\')
			fputs("\\\\", f);
		else if (*p == '\n')
			fputs("\\n", f);
		else
			fputc(*p, f);
	}
	fprintf(f, "\n# TYPE %s %s\n", name, type);
}

static void label_value(FILE *f, const char *v)
{
	for (const char *p = v; *p; p++) {
		if (*p == '\\')
			fputs("\\\\", f);
		else if (*p == '"')
			fputs("\\\"", f);
		else if (*p == '\n')
			fputs("\\n", f);
		else
			fputc(*p, f);
	}
}

void et_prom_sample(FILE *f, const char *name, const struct et_prom_label *l, size_t n, uint64_t v)
{
	fputs(name, f);
	for (size_t i = 0; i < n; i++) {
		fprintf(f, "%c%s=\"", i ? ',' : '{', l[i].name);
		label_value(f, l[i].value);
		fputc('"', f);
	}
	fprintf(f, "%s %llu\n", n ? "}" : "", (unsigned long long)v);
}

bool et_prom_name_ok(const char *s)
{
	if (!*s || (*s >= '0' && *s <= '9'))
		return false;
	for (const char *p = s; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		      *p == '_' || *p == ':'))
			return false;
	return true;
}
