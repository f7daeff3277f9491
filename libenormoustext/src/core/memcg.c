/*
 * core/memcg.c — how much anonymous memory the process's memory cgroups still
 * let the remapper copy text into.
 *
 * A copied window (the thp and collapse backends) is anonymous memory: it
 * is charged to the process's memory cgroup and, with no swap, can never be
 * reclaimed, while the page-cache text it replaces could have been.  A
 * program that fits its cgroup without the library must fit it with the
 * library, so the remapper asks here, once per pass,
 * how many bytes it may still copy: the smallest (limit - usage - margin)
 * over the process's cgroup and every ancestor (a parent's limit applies
 * to its children), in both hierarchies:
 *   cgroup v1, the "memory" controller: memory.limit_in_bytes and
 *     memory.usage_in_bytes (memory.memsw.* limits memory + swap: with no
 *     swap it is never lower, and swap is not what a copy takes);
 *   cgroup v2 (cgroup2): memory.max and memory.high (above high the group
 *     is throttled and reclaimed hard: not a place to push a program to),
 *     and memory.current.
 * The cgroup comes from /proc/self/cgroup, the mount points from
 * /proc/self/mountinfo (never a hard-coded /sys/fs/cgroup: containers and
 * old distributions mount them elsewhere).  hugetlb pages are charged to
 * the hugetlb controller, not here, unless cgroup2 is mounted with
 * memory_hugetlb_accounting (noted for the caller).
 *
 * It never changes a cgroup, never allocates (malloc may not be usable
 * yet) and never uses stdio: files are read with read(2) into stack
 * buffers.  A cgroup, mount or limit file that cannot be found or read is
 * no limit, so a process outside any limited cgroup behaves exactly as
 * without this module; a limit file that holds something that is not a
 * number, or a limit whose usage cannot be read, gives a budget of 0 there
 * (there may be a limit, and how near it is cannot be known).
 *
 * Owns: reading cgroup limits and usage; et_memcg_keep_best (which held-back
 * windows may still be copied, hottest first); et_memcg_unreclaimable (what
 * the limiting level cannot reclaim: runtime/giveback.c's watch).
 * May call: core (util).
 * Never: changes a cgroup; allocates; uses stdio.
 */
#include "core/memcg.h"

#include "core/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * The margin kept back below each limit: max(16 MiB, limit / 8).
 *
 * The budget is read at start-up (or at a dlopen), when the program has
 * not yet built its working set, and the copies stay for the life of the
 * process.  No figure can know how much the program will still need; what
 * is sure is that a copy buys a few percent of speed and an OOM kill costs
 * the whole program, so the margin errs on the large side:
 *   - an eighth of the limit: room for the growth of a program after
 *     start-up relative to its group's size, and for what the kernel
 *     charges to the group besides pages (page tables, slab, socket
 *     buffers, in v1 kernel memory too);
 *   - at least 16 MiB: in a small group an eighth is a few MiB, less than
 *     the library's own scratch tables plus the transient second copy of
 *     MADV_COLLAPSE and the kernel's per-process memory.
 * Usage counts the group's page cache, which the kernel could reclaim: a
 * budget that is too small, never one that is too large.
 */
uint64_t et_memcg_margin(uint64_t limit)
{
	uint64_t floor = 16ull << 20;
	uint64_t part = limit / 8;
	return part > floor ? part : floor;
}

/* v1 writes "no limit" as PAGE_COUNTER_MAX pages (0x7ffffffffffff000 with
 * 4 KiB pages, other values with other page sizes): anything this large is
 * no limit on any machine that exists. */
#define V1_UNLIMITED (1ull << 62)

/* ------------------------------------------------------------ line reader */

/* core/util.c's et_lines (skips a line longer than its buffer whole: cgroup
 * lines are short) */
#define lines et_lines
#define next_line et_lines_next

/* root + rel into out; false when it does not fit. */
static bool join(char *out, size_t cap, const char *root, const char *rel)
{
	if (!root || (root[0] == '/' && root[1] == '\0'))
		root = "";
	size_t a = strlen(root), b = strlen(rel);
	if (a + b + 1 > cap)
		return false;
	memcpy(out, root, a);
	memcpy(out + a, rel, b + 1);
	return true;
}

static bool open_lines(struct lines *r, const char *root, const char *rel)
{
	char path[1024];
	return join(path, sizeof path, root, rel) ? et_lines_open(r, path) : (r->fd = -1, false);
}

/* ---------------------------------------------------- where the cgroup is */

/* Is `word` one of the comma-separated items of `list`? */
static bool has_item(const char *list, const char *word)
{
	size_t n = strlen(word);
	for (const char *p = list; *p;) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		if (len == n && !memcmp(p, word, n))
			return true;
		if (!e)
			break;
		p = e + 1;
	}
	return false;
}

/* The process's cgroup in hierarchy `version` (1: the one with the memory
 * controller, 2: the unified one), from "ID:CONTROLLERS:PATH" lines. */
static bool cgroup_path(const char *root, int version, char *out, size_t cap)
{
	struct lines r;
	if (!open_lines(&r, root, "/proc/self/cgroup"))
		return false;
	bool found = false;
	for (char *l; !found && (l = next_line(&r));) {
		char *c1 = strchr(l, ':');
		char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (!c2 || c2[1] != '/')
			continue;
		*c1 = *c2 = '\0';
		bool match = version == 2 ? !strcmp(l, "0") && c1[1] == '\0' : has_item(c1 + 1, "memory");
		if (match && strlen(c2 + 1) < cap) {
			memcpy(out, c2 + 1, strlen(c2 + 1) + 1);
			found = true;
		}
	}
	bool err = r.err;
	et_lines_close(&r);
	return found && !err;
}

/* mountinfo writes space, tab, newline and backslash as \ooo. */
static void unescape(char *s)
{
	char *d = s;
	while (*s) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*d++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 4;
		} else {
			*d++ = *s++;
		}
	}
	*d = '\0';
}

/* Split off the next space-separated field of *p (NULL when none). */
static char *field(char **p)
{
	char *s = *p;
	while (*s == ' ')
		s++;
	if (!*s)
		return NULL;
	char *e = strchr(s, ' ');
	if (e) {
		*e = '\0';
		*p = e + 1;
	} else {
		*p = s + strlen(s);
	}
	return s;
}

/* Does the mount's root (the directory of the hierarchy it shows) hold the
 * cgroup?  Returns the cgroup's path below the mount point, or NULL. */
static const char *below(const char *cg, const char *mroot)
{
	if (!strcmp(mroot, "/"))
		return cg;
	size_t n = strlen(mroot);
	if (strncmp(cg, mroot, n) != 0 || (cg[n] != '/' && cg[n] != '\0'))
		return NULL;
	return cg + n;
}

/* The directory of the process's cgroup in hierarchy `version`: a mount
 * of it (cgroup with the memory option, or cgroup2) whose root holds the
 * cgroup.  dir gets ROOT + mount point + the rest, mlen the length of
 * ROOT + mount point (the walk up stops there). */
static bool cgroup_dir(const char *root, int version, char *dir, size_t cap, size_t *mlen,
                       bool *hugetlb_acct)
{
	char cg[512];
	if (!cgroup_path(root, version, cg, sizeof cg))
		return false;
	struct lines r;
	if (!open_lines(&r, root, "/proc/self/mountinfo"))
		return false;
	bool found = false;
	for (char *l; !found && (l = next_line(&r));) {
		/* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPEROPTS */
		char *sep = strstr(l, " - ");
		if (!sep)
			continue;
		*sep = '\0';
		char *tail = sep + 3, *p = l;
		char *f[5];
		int i = 0;
		while (i < 5 && (f[i] = field(&p)))
			i++;
		char *fstype = field(&tail), *source = field(&tail), *super = field(&tail);
		if (i < 5 || !fstype || !source || !super)
			continue;
		if (version == 2 ? strcmp(fstype, "cgroup2") != 0
		                 : strcmp(fstype, "cgroup") != 0 || !has_item(super, "memory"))
			continue;
		unescape(f[3]);
		unescape(f[4]);
		const char *rest = below(cg, f[3]);
		if (!rest || !join(dir, cap, root, f[4]))
			continue;
		size_t n = strlen(dir);
		/* "/" + "/a/b" would give "//a/b": harmless, but keep it clean */
		if (n > 0 && dir[n - 1] == '/' && rest[0] == '/')
			dir[--n] = '\0';
		if (n + strlen(rest) + 1 > cap)
			continue;
		memcpy(dir + n, rest, strlen(rest) + 1);
		/* the hierarchy's root itself ("/"): the mount point, no slash */
		size_t len = strlen(dir);
		while (len > n && dir[len - 1] == '/')
			dir[--len] = '\0';
		*mlen = n;
		if (version == 2)
			*hugetlb_acct = has_item(super, "memory_hugetlb_accounting");
		found = true;
	}
	et_lines_close(&r);
	return found;
}

/* ---------------------------------------------------------------- values */

/* One value file: 0 with *out, 1 for "max" (no limit), -ENOENT when it
 * cannot be read (missing, no access), -EINVAL when it holds something
 * else than a number. */
static int read_value(char *dir, size_t dlen, size_t cap, const char *name, uint64_t *out)
{
	size_t n = strlen(name);
	if (dlen + 1 + n + 1 > cap)
		return -ENOENT;
	dir[dlen] = '/';
	memcpy(dir + dlen + 1, name, n + 1);
	char buf[64];
	long got = et_read_file(dir, buf, sizeof buf);
	dir[dlen] = '\0';
	if (got < 0)
		return -ENOENT;
	size_t e = (size_t)got;
	while (e > 0 && (buf[e - 1] == '\n' || buf[e - 1] == ' '))
		e--;
	buf[e] = '\0';
	if (!strcmp(buf, "max"))
		return 1;
	if (e == 0)
		return -EINVAL;
	uint64_t v = 0;
	for (const char *p = buf; *p; p++) {
		if (*p < '0' || *p > '9')
			return -EINVAL;
		unsigned d = (unsigned)(*p - '0');
		if (v > (UINT64_MAX - d) / 10)
			return -EINVAL;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

/* One cgroup directory: its limit (the lowest of its limit files), its
 * usage, and what that leaves; the lowest over all levels wins. */
static void read_level(struct et_memcg *m, int version, char *dir, size_t dlen, size_t cap,
                       size_t rootlen)
{
	static const char v1[][24] = { "memory.limit_in_bytes" };
	static const char v2[][24] = { "memory.max", "memory.high" };
	const char (*names)[24] = version == 1 ? v1 : v2;
	size_t count = version == 1 ? 1 : 2;
	uint64_t limit = UINT64_MAX, usage = 0, v;
	bool garbled = false;

	m->levels++;
	for (size_t i = 0; i < count; i++) {
		int r = read_value(dir, dlen, cap, names[i], &v);
		if (r == -EINVAL)
			garbled = true;
		else if (r == 0 && !(version == 1 && v >= V1_UNLIMITED) && v < limit)
			limit = v;
	}
	if (!garbled && limit == UINT64_MAX)
		return;                   /* no limit here */
	if (!garbled && read_value(dir, dlen, cap, version == 1 ? "memory.usage_in_bytes" : "memory.current",
	                           &usage) != 0)
		garbled = true;           /* a limit, but how near it is unknown */
	uint64_t margin = garbled ? 0 : et_memcg_margin(limit);
	uint64_t left = garbled || limit <= usage || limit - usage <= margin ? 0 : limit - usage - margin;
	if (m->budget != ET_MEMCG_UNLIMITED && left >= m->budget)
		return;
	m->budget = left;
	m->limit = garbled ? 0 : limit;
	m->usage = garbled ? 0 : usage;
	m->margin = margin;
	m->version = version;
	m->garbled = garbled;
	et_strlcpy(m->path, dir + rootlen, sizeof m->path);
}

void et_memcg_read(struct et_memcg *m, const char *root)
{
	int saved = errno;
	memset(m, 0, sizeof *m);
	m->budget = ET_MEMCG_UNLIMITED;
	size_t rootlen = !root || (root[0] == '/' && root[1] == '\0') ? 0 : strlen(root);
	for (int version = 1; version <= 2; version++) {
		char dir[1024];
		size_t mlen = 0;
		bool acct = false;
		if (!cgroup_dir(root, version, dir, sizeof dir, &mlen, &acct))
			continue;
		if (version == 2)
			m->hugetlb_charged = acct;
		/* From the process's cgroup up to the top of the mount (the
		 * hierarchy's root, or the container's view of it). */
		size_t len = strlen(dir);
		for (int depth = 0; depth < 64; depth++) {
			read_level(m, version, dir, len, sizeof dir, rootlen);
			if (len <= mlen)
				break;
			while (len > mlen && dir[len - 1] != '/')
				len--;
			while (len > mlen && dir[len - 1] == '/')
				len--;
			if (len < mlen)
				len = mlen;
			dir[len] = '\0';
		}
	}
	errno = saved;
}

/* ---------------------------------------------------------- copy order */

/* Is window a (at index ia) copied before window b (at ib)?  Measured heat
 * first (the profile says these matter; a window the profile did not
 * measure is of an object it does not have), then the planner's order. */
static bool before(const struct et_window *a, size_t ia, const struct et_window *b, size_t ib)
{
	if (a->heat_known != b->heat_known)
		return a->heat_known;
	if (a->heat_known && a->heat != b->heat)
		return a->heat > b->heat;
	return ia < ib;
}

/* No allocation, no sort (a process has at most a few hundred windows in a
 * pass): find the allowed-th window in copy order by counting, then clear
 * the mark of it and of every window before it.  The order is total (ties
 * go to the index), so exactly one window has each rank. */
size_t et_memcg_keep_best(struct et_window *wins, size_t n, size_t allowed)
{
	size_t held = 0;
	for (size_t i = 0; i < n; i++)
		if (wins[i].held_back)
			held++;
	if (allowed == 0)
		return held;
	if (allowed >= held) {
		for (size_t i = 0; i < n; i++)
			wins[i].held_back = false;
		return 0;
	}
	size_t pivot = n;
	for (size_t i = 0; i < n && pivot == n; i++) {
		if (!wins[i].held_back)
			continue;
		size_t rank = 0;
		for (size_t j = 0; j < n; j++)
			if (j != i && wins[j].held_back && before(&wins[j], j, &wins[i], i))
				rank++;
		if (rank == allowed - 1)
			pivot = i;
	}
	for (size_t i = 0; i < n; i++)
		if (wins[i].held_back && (i == pivot || before(&wins[i], i, &wins[pivot], pivot)))
			wins[i].held_back = false;
	return held - allowed;
}

/* ------------------------------------------------- what cannot be reclaimed */

bool et_memcg_unreclaimable(const struct et_memcg *m, uint64_t *bytes)
{
	if (!m->version || m->garbled || !m->limit)
		return false;
	int saved = errno;
	char path[sizeof m->path + 16];
	snprintf(path, sizeof path, "%s/memory.stat", m->path);
	/* v1: total_* is the hierarchy below the level too (the process may
	 * sit in a child of the level that limits it); v2's are always so */
	const char *anon = m->version == 1 ? "total_rss " : "anon ";
	const char *shmem = m->version == 1 ? "total_shmem " : "shmem ";
	uint64_t sum = 0;
	unsigned found = 0;
	struct et_lines r;
	if (et_lines_open(&r, path)) {
		for (char *l; (l = et_lines_next(&r));) {
			size_t n = 0;
			if (!strncmp(l, anon, strlen(anon)))
				n = strlen(anon);
			else if (!strncmp(l, shmem, strlen(shmem)))
				n = strlen(shmem);
			if (!n)
				continue;
			char *e;
			unsigned long long v = strtoull(l + n, &e, 10);
			if (e != l + n) {
				sum += v;
				found++;
			}
		}
		et_lines_close(&r);
	}
	errno = saved;
	if (!found)
		return false;
	*bytes = sum;
	return true;
}
