/*
 * tools/enormoustext/setup.c — `enormoustext setup [--thp MODE]
 *     [--defrag MODE] [--hugetlb-pages N] [--hugetlb-size SIZE] [--dry-run]
 *     [--root DIR]`: change the system settings huge text depends on, as
 * root.
 *
 * Every write is printed before it is made, with the value it replaces;
 * --dry-run prints them and writes nothing.  After each write the setting is
 * read back: the kernel may refuse a value or, for the hugetlb pool, give
 * fewer pages than asked (memory too fragmented), and that is an error.
 * The library itself never changes a system setting (it adapts to what
 * the system allows, see the README): this command is the administrator's
 * tool for it.
 *
 * Owns: `setup`: the writes to sysfs (THP policy, defrag, the hugetlb
 * pool), each printed before it is made and read back after.
 * May call: core (sysinfo: the PMD size; options: sizes), common.c.
 * Never: writes anything --dry-run was given for; writes a file other than
 * those settings.
 */
#include "tool.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define THP_DIR "/sys/kernel/mm/transparent_hugepage"

struct write_op {
	char path[PATH_MAX];   /* under the root */
	const char *shown;     /* the path as shown (the real-system name) */
	char rel[128];
	char value[64];
	bool choice;           /* a "[selected]" choice file */
};

static const char *const thp_modes[] = { "always", "madvise", "never", NULL };
static const char *const defrag_modes[] = { "always", "defer", "defer+madvise", "madvise", "never", NULL };

static bool one_of(const char *v, const char *const *list)
{
	for (; *list; list++)
		if (!strcmp(v, *list))
			return true;
	return false;
}

static void current(const struct write_op *w, char *out, size_t cap)
{
	char buf[256];
	if (et_tool_read(w->path, buf, sizeof buf) < 0) {
		snprintf(out, cap, "?");
		return;
	}
	char *l = strchr(buf, '['), *r = l ? strchr(l, ']') : NULL;
	if (w->choice && l && r)
		snprintf(out, cap, "%.*s", (int)(r - l - 1), l + 1);
	else
		snprintf(out, cap, "%s", buf);
}

static int do_write(const struct write_op *w)
{
	int fd = open(w->path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0) {
		et_tool_err("%s: %s", w->path, strerror(errno));
		return ET_EXIT_BAD;
	}
	char line[80];
	int n = snprintf(line, sizeof line, "%s\n", w->value);
	ssize_t r = write(fd, line, (size_t)n);
	int e = errno;
	if (close(fd) != 0 && r == n) {
		r = -1;
		e = errno;
	}
	if (r != n) {
		et_tool_err("%s: writing '%s' failed: %s", w->path, w->value,
		            r < 0 ? strerror(e) : "short write");
		return ET_EXIT_BAD;
	}
	char now[256];
	current(w, now, sizeof now);
	if (strcmp(now, w->value) != 0) {
		if (!w->choice)
			et_tool_err("%s: asked for %s, it is now %s (not enough free memory in one piece for "
			            "the pool?)", w->path, w->value, now);
		else
			et_tool_err("%s: wrote '%s' but it reads back '%s'", w->path, w->value, now);
		return ET_EXIT_BAD;
	}
	return 0;
}

static void help(FILE *f)
{
	fprintf(f,
	        "usage: enormoustext setup [--thp MODE] [--defrag MODE] [--hugetlb-pages N]\n"
	        "                          [--hugetlb-size SIZE] [--dry-run] [--root DIR]\n"
	        "\n"
	        "Change the settings huge text depends on (root only).  Every write is printed\n"
	        "(\"write FILE: VALUE (was OLD)\") before it is made and read back after it.\n"
	        "\n"
	        "options:\n"
	        "  --thp MODE           " THP_DIR "/enabled: always, madvise or never\n"
	        "  --defrag MODE        " THP_DIR "/defrag: always, defer, defer+madvise,\n"
	        "                       madvise or never\n"
	        "  --hugetlb-pages N    size of the hugetlb pool, in pages:\n"
	        "                       /sys/kernel/mm/hugepages/hugepages-<SIZE in kB>/nr_hugepages;\n"
	        "                       fewer pages than asked (fragmented memory) is an error\n"
	        "  --hugetlb-size SIZE  the pool's page size (default: the PMD size; K/M/G)\n"
	        "  -n, --dry-run        print the writes, make none (needs no root)\n"
	        "  --root DIR           write under DIR instead of / (a test tree; needs no root)\n"
	        "  -h, --help           this help\n"
	        "\n"
	        "Exit status: 0; 1 not root, or a write failed or did not take; 2 usage error.\n");
}

int et_cmd_setup(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "thp", required_argument, NULL, 't' },
		{ "defrag", required_argument, NULL, 'd' },
		{ "hugetlb-pages", required_argument, NULL, 'p' },
		{ "hugetlb-size", required_argument, NULL, 's' },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "root", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *thp = NULL, *defrag = NULL, *pages = NULL, *root = "/";
	uint64_t hsize = 0, npages = 0;
	bool dry = false;
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, ":nh", lo, NULL)) != -1) {
		switch (c) {
		case 't':
			if (!one_of(optarg, thp_modes))
				return et_tool_usage("--thp %s: give always, madvise or never", optarg);
			thp = optarg;
			break;
		case 'd':
			if (!one_of(optarg, defrag_modes))
				return et_tool_usage("--defrag %s: give always, defer, defer+madvise, madvise "
				                     "or never", optarg);
			defrag = optarg;
			break;
		case 'p':
			if (et_tool_parse_u64(optarg, &npages) || npages > LONG_MAX)
				return et_tool_usage("--hugetlb-pages %s: give a number of pages (0 or more)",
				                     optarg);
			pages = optarg;
			break;
		case 's':
			if (et_parse_size(optarg, &hsize) || hsize < 4096 || (hsize & (hsize - 1)))
				return et_tool_usage("--hugetlb-size %s: give a page size such as 2M or 1G",
				                     optarg);
			break;
		case 'n':
			dry = true;
			break;
		case 'r':
			root = optarg;
			break;
		case 'h':
			help(stdout);
			return ET_EXIT_OK;
		default:
			return et_tool_bad_option(c, argv, optind);
		}
	}
	if (optind < argc)
		return et_tool_usage("unexpected argument '%s'", argv[optind]);
	if (hsize && !pages)
		return et_tool_usage("--hugetlb-size goes with --hugetlb-pages");
	if (!thp && !defrag && !pages)
		return et_tool_usage("nothing to do: give --thp, --defrag or --hugetlb-pages");
	bool real = !strcmp(root, "/");
	struct stat st;
	if (!real && (stat(root, &st) != 0 || !S_ISDIR(st.st_mode))) {
		et_tool_err("--root %s: not a directory", root);
		return ET_EXIT_BAD;
	}

	struct write_op ops[3];
	size_t n = 0;
	if (thp) {
		snprintf(ops[n].rel, sizeof ops[n].rel, THP_DIR "/enabled");
		snprintf(ops[n].value, sizeof ops[n].value, "%s", thp);
		ops[n++].choice = true;
	}
	if (defrag) {
		snprintf(ops[n].rel, sizeof ops[n].rel, THP_DIR "/defrag");
		snprintf(ops[n].value, sizeof ops[n].value, "%s", defrag);
		ops[n++].choice = true;
	}
	if (pages) {
		if (!hsize) {
			struct et_sysinfo si;
			et_sysinfo_read_pmd(&si, root);
			hsize = si.pmd_size;
		}
		snprintf(ops[n].rel, sizeof ops[n].rel, "/sys/kernel/mm/hugepages/hugepages-%llukB/nr_hugepages",
		         (unsigned long long)(hsize >> 10));
		snprintf(ops[n].value, sizeof ops[n].value, "%llu", (unsigned long long)npages);
		ops[n++].choice = false;
	}
	for (size_t i = 0; i < n; i++) {
		snprintf(ops[i].path, sizeof ops[i].path, "%s%s", real ? "" : root, ops[i].rel);
		ops[i].shown = ops[i].path;
		if (access(ops[i].path, F_OK) != 0) {
			et_tool_err("%s: %s (%s)", ops[i].path, strerror(errno),
			            ops[i].choice ? "a kernel without transparent huge pages?"
			                          : "no hugetlb pool of that page size");
			return ET_EXIT_BAD;
		}
	}
	if (!dry && real && geteuid() != 0) {
		et_tool_err("needs root to write %s: run it as root (sudo), or see the writes with "
		            "--dry-run", ops[0].path);
		return ET_EXIT_BAD;
	}
	for (size_t i = 0; i < n; i++) {
		char was[256];
		current(&ops[i], was, sizeof was);
		printf("%s %s: %s (was %s)\n", dry ? "would write" : "write", ops[i].shown, ops[i].value, was);
		fflush(stdout);
		if (!dry) {
			int rc = do_write(&ops[i]);
			if (rc)
				return rc;
		}
	}
	return ET_EXIT_OK;
}
