/*
 * tools/enormoustext/common.c — small helpers of the command.
 *
 * Owns: the stdio end of the core's writers (et_tool_sink_file: the JSON
 * writer and the profile writer onto a FILE), size formatting, trimming,
 * the read of a small file as the command wants it (et_read_file, trimmed),
 * a sysfs choice ("always [madvise] never") and the "hugepages-<N>kB"
 * entries of a sysfs directory, the parse of a decimal argument, the
 * array that grows by realloc (et_tool_grow); why
 * another process cannot be read (et_tool_denied_why), whether a process
 * is a kernel thread.
 * May call: core (json, util).
 * Never: writes JSON, a profile or a file by hand (core/json.c,
 * core/profile.c and core/outfile.c do); depends on output.c (the fuzz
 * driver of `check` links this file without it).
 */
#include "tool.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------- sinks */

static void file_write(void *f, const char *s, size_t n)
{
	fwrite(s, 1, n, f);     /* an error stays in the stream (ferror) */
}

static void file_flush(void *f)
{
	fflush(f);
}

void et_tool_sink_file(struct et_sink *s, FILE *f)
{
	*s = (struct et_sink){ .write = file_write, .flush = file_flush, .ctx = f };
}

void et_json_init(struct et_json *j, FILE *f)
{
	struct et_sink s;
	et_tool_sink_file(&s, f);
	et_json_begin(j, &s);
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

long et_tool_read_choice(const char *path, char *out, size_t cap)
{
	char buf[256];
	if (cap)
		out[0] = '\0';
	long n = et_tool_read(path, buf, sizeof buf);
	if (n < 0)
		return n;
	char *l = strchr(buf, '['), *r = l ? strchr(l, ']') : NULL;
	if (l && r)
		snprintf(out, cap, "%.*s", (int)(r - l - 1), l + 1);
	else
		snprintf(out, cap, "%s", buf);
	return (long)strlen(out);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

size_t et_tool_size_dirs(const char *dir, uint64_t *sizes, size_t cap)
{
	DIR *d = opendir(dir);
	size_t n = 0;
	if (!d)
		return 0;
	struct dirent *e;
	while ((e = readdir(d)) && n < cap) {
		unsigned long long kb;
		char tail[8];
		if (sscanf(e->d_name, "hugepages-%llu%7s", &kb, tail) != 2 || strcmp(tail, "kB"))
			continue;
		sizes[n++] = (uint64_t)kb * 1024;
	}
	closedir(d);
	qsort(sizes, n, sizeof *sizes, cmp_u64);
	return n;
}

int et_tool_parse_pid(const char *s, long *out)
{
	uint64_t v;
	if (et_tool_parse_u64(s, &v) != 0 || v == 0 || v > 4194304)   /* the kernel's PID_MAX_LIMIT */
		return -1;
	*out = (long)v;
	return 0;
}

void *et_tool_grow(void *p, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return p;
	size_t n = *cap ? *cap : 32;   /* doubled at least once: 64 first */
	do {
		if (n > SIZE_MAX / 2)
			return NULL;
		n *= 2;
	} while (n < need);
	if (elem && n > SIZE_MAX / elem)
		return NULL;
	void *q = realloc(p, n * elem);
	if (!q)
		return NULL;
	*cap = n;
	return q;
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

/* ------------------------------------------------------------ access */

/* Whether this process has CAP_SYS_PTRACE in its effective set (what lets
 * root read another user's smaps), from /proc/self/status. */
static bool have_cap_sys_ptrace(void)
{
	char line[256];
	bool cap = false;
	FILE *f = fopen("/proc/self/status", "r");
	while (f && fgets(line, sizeof line, f)) {
		unsigned long long eff;
		if (sscanf(line, "CapEff: %llx", &eff) == 1) {
			cap = (eff >> 19) & 1;          /* CAP_SYS_PTRACE */
			break;
		}
	}
	if (f)
		fclose(f);
	return cap;
}

const char *et_tool_denied_why(void)
{
	if (geteuid() != 0)
		return "the process belongs to another user: run as root or as its owner";
	if (!have_cap_sys_ptrace())
		return "root without CAP_SYS_PTRACE, as in a container, reads only its own user's "
		       "processes: run with CAP_SYS_PTRACE or as the process's owner";
	return "refused even to root with CAP_SYS_PTRACE: the kernel's ptrace access check "
	       "(a security module such as SELinux or AppArmor, Yama's kernel.yama.ptrace_scope) "
	       "or hidepid= on the proc mount";
}

int et_tool_kthread(const char *proc, long pid)
{
	char path[4096], buf[1024];
	snprintf(path, sizeof path, "%s/%ld/stat", proc, pid);
	if (et_tool_read(path, buf, sizeof buf) < 0)
		return 0;
	/* "PID (comm) S ppid pgrp session tty tpgid flags ...": comm may hold
	 * spaces and parentheses, the last ')' ends it */
	const char *p = strrchr(buf, ')');
	unsigned long long flags;
	if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %llu", &flags) != 1)
		return 0;
	return (flags & 0x00200000) != 0;   /* PF_KTHREAD */
}
