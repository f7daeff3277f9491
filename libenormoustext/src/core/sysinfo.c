/*
 * core/sysinfo.c — the sysinfo stage: what the system allows: PMD size, THP policy (enabled,
 * defrag), whether THP is disabled for this process, and the hugetlb pool
 * for the PMD size.  Readers take a root directory so that tests can point
 * them at a fake sysfs tree; nothing here changes a setting.
 *
 * It also owns the backend order `auto` tries (et_backend_chain), a pure
 * function of those facts, and the PMD size limits (et_pmd_size_floor,
 * et_pmd_size_usable).
 *
 * Owns: the facts of struct et_sysinfo.
 * May call: core (util: small files), os/mm.c (the process flag).
 * Never: changes a setting; keeps state.
 */
#include "core/sysinfo.h"

#include "core/util.h"
#include "os/os.h"

#include <sys/auxv.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

static void join(char *out, size_t cap, const char *root, const char *rel)
{
	if (!root || !*root || (root[0] == '/' && root[1] == '\0'))
		root = "";
	snprintf(out, cap, "%s%s", root, rel);
}

/* The bracketed word of a sysfs choice file: "always [madvise] never". */
static int bracketed(const char *text, char *word, size_t cap)
{
	const char *l = strchr(text, '[');
	const char *r = l ? strchr(l, ']') : NULL;
	if (!l || !r || (size_t)(r - l - 1) >= cap)
		return -EINVAL;
	memcpy(word, l + 1, (size_t)(r - l - 1));
	word[r - l - 1] = '\0';
	return 0;
}

static long read_long(const char *path, bool *ok)
{
	char buf[64];
	*ok = false;
	if (et_read_file(path, buf, sizeof buf) <= 0)
		return -1;
	long v = 0;
	const char *p = buf;
	if (*p < '0' || *p > '9')
		return -1;
	for (; *p >= '0' && *p <= '9'; p++) {
		int d = *p - '0';
		if (v > (LONG_MAX - d) / 10)
			return -1;    /* too large to be a real value: unknown */
		v = v * 10 + d;
	}
	*ok = true;
	return v;
}

void et_sysinfo_read_pmd(struct et_sysinfo *si, const char *root)
{
	char path[512];
	bool ok;

	memset(si, 0, sizeof *si);
	si->pmd_size = 2u << 20;
	si->hugetlb_free = -1;
	si->hugetlb_total = -1;

	join(path, sizeof path, root, "/sys/kernel/mm/transparent_hugepage/hpage_pmd_size");
	long pmd = read_long(path, &ok);
	/* Accept only a power of two of at least 64 KiB. */
	if (ok && pmd >= 65536 && (pmd & (pmd - 1)) == 0) {
		si->pmd_size = (uint64_t)pmd;
		si->pmd_size_read = true;
	}
}

void et_sysinfo_read_policy(struct et_sysinfo *si, const char *root)
{
	char path[512], buf[256], word[32];
	bool ok;

	join(path, sizeof path, root, "/sys/kernel/mm/transparent_hugepage/enabled");
	if (et_read_file(path, buf, sizeof buf) > 0 && bracketed(buf, word, sizeof word) == 0) {
		if (!strcmp(word, "always")) si->thp = ET_THP_ALWAYS;
		else if (!strcmp(word, "madvise")) si->thp = ET_THP_MADVISE;
		else if (!strcmp(word, "never")) si->thp = ET_THP_NEVER;
	}

	join(path, sizeof path, root, "/sys/kernel/mm/transparent_hugepage/defrag");
	if (et_read_file(path, buf, sizeof buf) > 0 && bracketed(buf, word, sizeof word) == 0) {
		if (!strcmp(word, "always")) si->defrag = ET_DEFRAG_ALWAYS;
		else if (!strcmp(word, "defer")) si->defrag = ET_DEFRAG_DEFER;
		else if (!strcmp(word, "defer+madvise")) si->defrag = ET_DEFRAG_DEFER_MADVISE;
		else if (!strcmp(word, "madvise")) si->defrag = ET_DEFRAG_MADVISE;
		else if (!strcmp(word, "never")) si->defrag = ET_DEFRAG_NEVER;
	}

	char rel[128];
	snprintf(rel, sizeof rel, "/sys/kernel/mm/hugepages/hugepages-%llukB/free_hugepages",
	         (unsigned long long)(si->pmd_size >> 10));
	join(path, sizeof path, root, rel);
	long v = read_long(path, &ok);
	if (ok)
		si->hugetlb_free = v;
	/* Reserved pages are promised to someone (a mapping made with them in
	 * mind): not ours to take. */
	snprintf(rel, sizeof rel, "/sys/kernel/mm/hugepages/hugepages-%llukB/resv_hugepages",
	         (unsigned long long)(si->pmd_size >> 10));
	join(path, sizeof path, root, rel);
	long resv = read_long(path, &ok);
	if (ok && si->hugetlb_free > 0)
		si->hugetlb_free = resv < si->hugetlb_free ? si->hugetlb_free - resv : 0;
	snprintf(rel, sizeof rel, "/sys/kernel/mm/hugepages/hugepages-%llukB/nr_hugepages",
	         (unsigned long long)(si->pmd_size >> 10));
	join(path, sizeof path, root, rel);
	v = read_long(path, &ok);
	if (ok)
		si->hugetlb_total = v;

	si->policy_read = true;
	/* The process flag is not a file: it is only read for the real system. */
	if (!root || !*root || !strcmp(root, "/"))
		si->thp_disabled_process = et_os_thp_disabled();
}

void et_sysinfo_read(struct et_sysinfo *si, const char *root)
{
	et_sysinfo_read_pmd(si, root);
	et_sysinfo_read_policy(si, root);
}

const char *et_thp_mode_name(enum et_thp_mode m)
{
	switch (m) {
	case ET_THP_ALWAYS: return "always";
	case ET_THP_MADVISE: return "madvise";
	case ET_THP_NEVER: return "never";
	default: return "unknown";
	}
}

const char *et_defrag_mode_name(enum et_defrag_mode m)
{
	switch (m) {
	case ET_DEFRAG_ALWAYS: return "always";
	case ET_DEFRAG_DEFER: return "defer";
	case ET_DEFRAG_DEFER_MADVISE: return "defer+madvise";
	case ET_DEFRAG_MADVISE: return "madvise";
	case ET_DEFRAG_NEVER: return "never";
	default: return "unknown";
	}
}

/*
 * Which backends can succeed, best first:
 *  - THP disabled for the process (prctl): neither faults nor MADV_COLLAPSE
 *    give huge pages to its anonymous memory; only the hugetlb pool can.
 *  - enabled=always|madvise: a MADV_HUGEPAGE region gets a huge page at the
 *    first fault when defrag lets that fault compact (always, madvise,
 *    defer+madvise); otherwise the fault may fall back to small pages, so
 *    MADV_COLLAPSE (which compacts by itself) goes first.
 *  - enabled=never (or no THP sysfs at all): faults never give huge pages;
 *    MADV_COLLAPSE is independent of the sysfs policy, so it may.
 *  - hugetlb last: the pool is reserved by the administrator, maybe for
 *    something else, and a page taken from it is taken from them.
 */
int et_backend_chain(const struct et_sysinfo *si, enum et_backend requested,
                     enum et_backend out[4], const char **why)
{
	int n = 0;
	bool pool = si->hugetlb_free > 0;
	*why = NULL;

	if (requested == ET_BACKEND_THP || requested == ET_BACKEND_COLLAPSE) {
		if (si->thp_disabled_process) {
			*why = "THP disabled for this process (PR_SET_THP_DISABLE)";
			return 0;
		}
		if (requested == ET_BACKEND_THP && si->thp == ET_THP_NEVER) {
			*why = "THP is 'never' on this system; thp backend cannot get huge pages";
			return 0;
		}
		out[n++] = requested;
		return n;
	}
	if (requested == ET_BACKEND_HUGETLB) {
		if (!pool) {
			*why = "the hugetlb pool has no free pages of the PMD size";
			return 0;
		}
		out[n++] = ET_BACKEND_HUGETLB;
		return n;
	}

	/* The file backend maps a window of the file itself with one PMD entry
	 * when the page cache can hold it huge; the kernel refuses PMD
	 * mappings in a process that disabled THP, whatever the policy. */
	if (requested == ET_BACKEND_FILE) {
		if (si->thp_disabled_process) {
			*why = "THP disabled for this process (PR_SET_THP_DISABLE)";
			return 0;
		}
		out[n++] = ET_BACKEND_FILE;
		return n;
	}

	/* auto: zero-copy first, then copies. */
	if (si->thp_disabled_process) {
		if (pool)
			out[n++] = ET_BACKEND_HUGETLB;
		else
			*why = "THP disabled for this process (PR_SET_THP_DISABLE) and no free hugetlb pages";
		return n;
	}
	out[n++] = ET_BACKEND_FILE;
	switch (si->thp) {
	case ET_THP_ALWAYS:
	case ET_THP_MADVISE:
		if (si->defrag == ET_DEFRAG_DEFER || si->defrag == ET_DEFRAG_NEVER) {
			out[n++] = ET_BACKEND_COLLAPSE;
			out[n++] = ET_BACKEND_THP;
		} else {
			out[n++] = ET_BACKEND_THP;
			out[n++] = ET_BACKEND_COLLAPSE;
		}
		break;
	case ET_THP_NEVER:
	case ET_THP_UNKNOWN:
		out[n++] = ET_BACKEND_COLLAPSE;
		break;
	}
	if (pool)
		out[n++] = ET_BACKEND_HUGETLB;
	return n;
}


ET_STARTUP uint64_t et_pmd_size_floor(void)
{
	/* Where the PMD maps (page size / 8) pages of the page size — x86-64
	 * (2 MiB), arm64 with 4/16/64 KiB pages (2/32/512 MiB), riscv64 — that
	 * product is the PMD size itself.  Elsewhere: no floor, read sysfs. */
#if defined(__x86_64__) || defined(__aarch64__) || (defined(__riscv) && __riscv_xlen == 64)
	uint64_t pg = getauxval(AT_PAGESZ);
	if (pg >= 4096 && (pg & (pg - 1)) == 0)
		return pg / 8 * pg;
#endif
	return 0;
}

bool et_pmd_size_usable(uint64_t pmd)
{
	return pmd > 0 && pmd <= ET_PMD_MAX;
}
