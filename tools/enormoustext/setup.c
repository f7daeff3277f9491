/*
 * tools/enormoustext/setup.c — `enormoustext setup [--thp MODE]
 *     [--defrag MODE] [--hugetlb SIZE | --hugetlb-pages N]
 *     [--hugetlb-size SIZE] [--force] [--persist | --undo] [--dry-run]
 *     [--root DIR]`: change the system settings huge text depends on, as
 * root, and (--persist) make them survive a reboot.
 *
 * Every write is printed before it is made, with the value it replaces;
 * --dry-run prints them and writes nothing.  After each write the setting is
 * read back: the kernel may refuse a value or, for the hugetlb pool, give
 * fewer pages than asked (memory too fragmented), and that is an error.
 * The library itself never changes a system setting (it adapts to what
 * the system allows, see the README): this command is the administrator's
 * tool for it.
 *
 * --persist writes two small files, each starting with a marker line:
 *   /etc/tmpfiles.d/enormoustext.conf   `w` lines for THP enabled and
 *       defrag (and a pool of a page size other than the default one),
 *       applied at boot by systemd-tmpfiles;
 *   /etc/sysctl.d/60-enormoustext.conf  vm.nr_hugepages for a pool of the
 *       default huge page size, applied at boot by systemd-sysctl.
 * A setting already in our file and not given now stays; each setting keeps,
 * in a "# was VALUE" comment, what it was before it was first persisted.  A
 * file there without the marker is someone else's: refused, never replaced.
 * Files are written beside and renamed in (outfile.c), fsync'ed, and so is
 * their directory.  --undo removes exactly the files that carry the marker,
 * names them and what they set, and changes no running setting (it prints
 * the command that would put back the values of the "# was" comments).
 *
 * Owns: `setup`: the writes to sysfs (THP policy, defrag, the hugetlb
 * pool), each printed before it is made and read back after; the two
 * boot-time files of --persist and their removal (--undo); the pool's size
 * check against MemTotal.
 * May call: core (sysinfo: the PMD size; options: sizes; outfile: the
 * files), common.c, output.c (messages), msg.c.
 * Never: writes anything --dry-run was given for; writes a file other than
 * those settings and the two files; replaces or removes a file without the
 * marker.
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
#define TMPFILES_REL "/etc/tmpfiles.d/enormoustext.conf"
#define SYSCTL_REL "/etc/sysctl.d/60-enormoustext.conf"
#define MARKER "# Written by enormoustext setup --persist; enormoustext setup --undo removes it."
/* The pool against memory: refused above (without --force), warned above. */
#define POOL_REFUSE_PCT 50
#define POOL_WARN_PCT 25

struct write_op {
	char path[PATH_MAX];   /* under the root */
	const char *shown;     /* the path as shown (the real-system name) */
	char rel[128];
	char value[64];
	bool choice;           /* a "[selected]" choice file */
	char was[64];          /* its value before this run */
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

/* ------------------------------------------------------------ memory */

/* A "Key:   N kB" line of meminfo, in bytes; 0 when absent.  Under a test
 * root, ROOT/proc/meminfo when there is one, else the running system's. */
static uint64_t meminfo(const char *root, bool real, const char *key, char *src, size_t scap)
{
	char path[PATH_MAX], buf[8192];
	snprintf(path, sizeof path, "%s/proc/meminfo", real ? "" : root);
	if (et_read_file(path, buf, sizeof buf) <= 0) {
		snprintf(path, sizeof path, "/proc/meminfo");
		if (et_read_file(path, buf, sizeof buf) <= 0)
			return 0;
	}
	if (src)
		snprintf(src, scap, "%s", path);
	size_t kl = strlen(key);
	for (const char *p = buf; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		unsigned long long kb;
		if (!strncmp(p, key, kl) && p[kl] == ':' && sscanf(p + kl + 1, " %llu", &kb) == 1)
			return (uint64_t)kb << 10;
	}
	return 0;
}

/* The pool against MemTotal: ET_EXIT_BAD after one line when it takes more
 * than POOL_REFUSE_PCT (without force); a warning above POOL_WARN_PCT. */
static int check_pool(const char *root, bool real, const char *asked, uint64_t npages,
                      uint64_t hsize, bool force)
{
	char src[PATH_MAX], a[16], b[16], c[16];
	uint64_t total = meminfo(root, real, "MemTotal", src, sizeof src);
	if (!total || !npages)
		return 0;
	if (hsize && npages > UINT64_MAX / hsize) {
		et_tool_err("%s: %llu pages of %s do not fit in 64 bits", asked,
		            (unsigned long long)npages, et_tool_size(a, sizeof a, hsize));
		return ET_EXIT_BAD;
	}
	uint64_t bytes = npages * hsize;
	double pct = 100.0 * (double)bytes / (double)total;
	et_tool_size(a, sizeof a, bytes);
	et_tool_size(b, sizeof b, hsize);
	et_tool_size(c, sizeof c, total);
	if (pct > POOL_REFUSE_PCT && !force) {
		et_tool_err("%s: a pool of %s (%llu pages of %s) is %.0f%% of MemTotal (%s, %s): above "
		            "%d%% the rest of the system may run out of memory; give --force to do it "
		            "anyway", asked, a, (unsigned long long)npages, b, pct, c, src, POOL_REFUSE_PCT);
		return ET_EXIT_BAD;
	}
	if (pct > POOL_WARN_PCT)
		et_tool_err("warning: a pool of %s (%llu pages of %s) is %.0f%% of MemTotal (%s): that "
		            "memory serves hugetlb mappings only", a, (unsigned long long)npages, b, pct, c);
	return 0;
}

/* ----------------------------------------------------------- persist */

/* One setting of a persisted file: a tmpfiles.d `w` line (key = the sysfs
 * path) or the sysctl (key = "vm.nr_hugepages"), with what it was before
 * it was first persisted. */
struct entry {
	char key[128], value[64], was[64];
};
#define MAX_ENTRIES 8

struct conf {
	const char *rel;
	char path[PATH_MAX];
	bool tmpfiles;             /* else sysctl.d */
	bool exists, ours;         /* there now; with the marker */
	const char *foreign;       /* why it is not ours ("no marker line", ...) */
	struct entry e[MAX_ENTRIES];
	size_t n;
	bool touched;              /* --persist changes it */
	char text[4096];           /* what --persist writes */
};

/* Is the file at c->path ours, and what does it set?  Never fails: what
 * cannot be read is not ours. */
static void conf_load(struct conf *c)
{
	struct stat st;
	c->exists = lstat(c->path, &st) == 0;
	c->ours = false;
	c->n = 0;
	if (!c->exists)
		return;
	if (S_ISLNK(st.st_mode)) {
		c->foreign = "a symbolic link";
		return;
	}
	if (!S_ISREG(st.st_mode)) {
		c->foreign = "not a regular file";
		return;
	}
	char buf[4096];
	long len = et_read_file(c->path, buf, sizeof buf);
	if (len < 0) {
		c->foreign = "unreadable";
		return;
	}
	size_t ml = strlen(MARKER);
	if (strncmp(buf, MARKER, ml) != 0 || (buf[ml] != '\n' && buf[ml] != '\0')) {
		c->foreign = "no marker line";
		return;
	}
	c->ours = true;
	char was[64] = "";
	for (char *line = buf, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		char k[128], v[64];
		if (!strncmp(line, "# was ", 6)) {
			snprintf(was, sizeof was, "%s", line + 6);
			continue;
		}
		bool got = c->tmpfiles ? sscanf(line, "w %127s - - - - %63s", k, v) == 2
		                       : sscanf(line, "%127s = %63s", k, v) == 2;
		if (got && c->n < MAX_ENTRIES) {
			struct entry *e = &c->e[c->n++];
			snprintf(e->key, sizeof e->key, "%s", k);
			snprintf(e->value, sizeof e->value, "%s", v);
			snprintf(e->was, sizeof e->was, "%s", was);
		}
		was[0] = '\0';
	}
}

/* Set key to value in c (a new entry remembers `was`). */
static void conf_set(struct conf *c, const char *key, const char *value, const char *was)
{
	c->touched = true;
	for (size_t i = 0; i < c->n; i++)
		if (!strcmp(c->e[i].key, key)) {
			snprintf(c->e[i].value, sizeof c->e[i].value, "%s", value);
			return;
		}
	if (c->n < MAX_ENTRIES) {
		struct entry *e = &c->e[c->n++];
		snprintf(e->key, sizeof e->key, "%s", key);
		snprintf(e->value, sizeof e->value, "%s", value);
		snprintf(e->was, sizeof e->was, "%s", was);
	}
}

static void conf_render(struct conf *c)
{
	size_t n = 0, cap = sizeof c->text;
#define PUT(...) do { if (n < cap) n += (size_t)snprintf(c->text + n, cap - n, __VA_ARGS__); } while (0)
	PUT("%s\n", MARKER);
	if (c->tmpfiles)
		PUT("# Huge-page settings for program text (libenormoustext), written at boot by "
		    "systemd-tmpfiles.\n");
	else
		PUT("# The hugetlb pool for program text (libenormoustext), set at boot by "
		    "systemd-sysctl.\n");
	for (size_t i = 0; i < c->n; i++) {
		if (c->e[i].was[0])
			PUT("# was %s\n", c->e[i].was);
		if (c->tmpfiles)
			PUT("w %s - - - - %s\n", c->e[i].key, c->e[i].value);
		else
			PUT("%s = %s\n", c->e[i].key, c->e[i].value);
	}
#undef PUT
}

/* mkdir DIR (0755) unless it is there; 0 or -errno. */
static int make_dir(const char *dir)
{
	if (mkdir(dir, 0755) == 0 || errno == EEXIST)
		return 0;
	return -errno;
}

static int sync_dir_of(const char *path)
{
	char dir[PATH_MAX];
	snprintf(dir, sizeof dir, "%s", path);
	char *s = strrchr(dir, '/');
	if (!s)
		return 0;
	*s = '\0';
	int fd = open(dir[0] ? dir : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int r = fsync(fd) == 0 ? 0 : -errno;
	close(fd);
	return r;
}

/* c->text into c->path: beside it, fsync'ed, renamed in, the directory
 * fsync'ed.  ET_EXIT_OK, or ET_EXIT_BAD after one line naming it. */
static int conf_write(struct conf *c, const char *root, bool real)
{
	char dir[PATH_MAX];
	snprintf(dir, sizeof dir, "%s/etc", real ? "" : root);
	int e = make_dir(dir);
	if (!e) {
		snprintf(dir, sizeof dir, "%s", c->path);
		*strrchr(dir, '/') = '\0';
		e = make_dir(dir);
	}
	if (e) {
		et_tool_err("%s: %s", dir, strerror(-e));
		return ET_EXIT_BAD;
	}
	struct et_out o;
	e = et_out_open(&o, c->path, ET_OUT_NOFOLLOW | ET_OUT_FILES_ONLY);
	if (e) {
		et_tool_out_error(c->path, &o, e);
		return ET_EXIT_BAD;
	}
	e = et_out_write(&o, c->text, strlen(c->text));
	if (!e && fchmod(o.fd, 0644) != 0)
		e = -errno;
	if (!e && fsync(o.fd) != 0)
		e = -errno;
	if (e) {
		et_out_abort(&o);
		et_tool_out_error(c->path, NULL, e);
		return ET_EXIT_BAD;
	}
	e = et_out_commit(&o);
	if (!e)
		e = sync_dir_of(c->path);
	if (e) {
		et_tool_out_error(c->path, &o, e);
		return ET_EXIT_BAD;
	}
	return ET_EXIT_OK;
}

static const char *short_key(const char *key)
{
	if (!strcmp(key, THP_DIR "/enabled"))
		return "enabled";
	if (!strcmp(key, THP_DIR "/defrag"))
		return "defrag";
	const char *s = strrchr(key, '/');
	if (s && !strcmp(s, "/nr_hugepages"))
		return "nr_hugepages";
	return key;
}

/* The setup options that give entry e back its "# was" value ("" if none);
 * *pool: they are a pool's (one pool per command). */
static void restore_args(const struct entry *e, const char *key, char *out, size_t cap, bool *pool)
{
	out[0] = '\0';
	*pool = false;
	if (!e->was[0] || !strcmp(e->was, "?"))
		return;
	unsigned long long kb;
	char sz[16];
	if (!strcmp(key, "enabled")) {
		snprintf(out, cap, " --thp %s", e->was);
	} else if (!strcmp(key, "defrag")) {
		snprintf(out, cap, " --defrag %s", e->was);
	} else if (!strcmp(e->key, "vm.nr_hugepages")) {
		snprintf(out, cap, " --hugetlb-pages %s", e->was);
		*pool = true;
	} else if (sscanf(e->key, "/sys/kernel/mm/hugepages/hugepages-%llukB/", &kb) == 1) {
		snprintf(out, cap, " --hugetlb-pages %s --hugetlb-size %s", e->was,
		         et_tool_size(sz, sizeof sz, (uint64_t)kb << 10));
		*pool = true;
	}
}

static int undo(struct conf *cs, size_t nc, bool dry)
{
	/* the commands that put back the "# was" values: THP settings in the
	 * first, each pool in one of its own */
	char restore[4][256];
	size_t nr = 1;
	restore[0][0] = '\0';
	bool any = false;
	for (size_t i = 0; i < nc; i++) {
		struct conf *c = &cs[i];
		if (!c->exists)
			continue;
		if (!c->ours) {
			printf("left alone %s: not written by enormoustext setup (%s)\n", c->path, c->foreign);
			continue;
		}
		any = true;
		printf("%s %s (it set", dry ? "would remove" : "remove", c->path);
		for (size_t k = 0; k < c->n; k++) {
			const char *key = c->tmpfiles ? short_key(c->e[k].key) : c->e[k].key;
			printf("%s %s %s", k ? "," : "", key, c->e[k].value);
			char arg[200];
			bool pool;
			restore_args(&c->e[k], key, arg, sizeof arg, &pool);
			if (!arg[0])
				continue;
			if (pool && nr < 4)
				snprintf(restore[nr++], sizeof restore[0], "%s", arg);
			else if (!pool)
				snprintf(restore[0] + strlen(restore[0]), sizeof restore[0] - strlen(restore[0]),
				         "%s", arg);
		}
		printf("%s)\n", c->n ? "" : " nothing");
		fflush(stdout);
		if (!dry && (unlink(c->path) != 0 || sync_dir_of(c->path) != 0)) {
			et_tool_err("%s: cannot remove it: %s", c->path, strerror(errno));
			return ET_EXIT_BAD;
		}
	}
	if (!any) {
		printf("nothing to undo: no %s or %s written by enormoustext setup --persist\n",
		       cs[0].path, cs[1].path);
		return ET_EXIT_OK;
	}
	bool have = false;
	for (size_t i = 0; i < nr; i++)
		have |= restore[i][0] != '\0';
	printf("the running settings are unchanged%s\n", have ? "; to put back what they were "
	       "before --persist:" : " (no earlier values recorded)");
	for (size_t i = 0; i < nr; i++)
		if (restore[i][0])
			printf("  enormoustext setup%s\n", restore[i]);
	return ET_EXIT_OK;
}

static void help(FILE *f)
{
	fprintf(f,
	        "usage: enormoustext setup [--thp MODE] [--defrag MODE]\n"
	        "                          [--hugetlb SIZE | --hugetlb-pages N] [--hugetlb-size SIZE]\n"
	        "                          [--force] [--persist | --undo] [--dry-run] [--root DIR]\n"
	        "\n"
	        "Change the settings huge text depends on (root only).  Every write is printed\n"
	        "(\"write FILE: VALUE (was OLD)\") before it is made and read back after it.\n"
	        "\n"
	        "options:\n"
	        "  --thp MODE           " THP_DIR "/enabled: always, madvise or never\n"
	        "  --defrag MODE        " THP_DIR "/defrag: always, defer, defer+madvise,\n"
	        "                       madvise or never\n"
	        "  --hugetlb SIZE       size of the hugetlb pool in bytes (K/M/G: 1G, 512M, 2048K),\n"
	        "                       a multiple of its page size; 0 empties it\n"
	        "  --hugetlb-pages N    size of the hugetlb pool, in pages:\n"
	        "                       /sys/kernel/mm/hugepages/hugepages-<SIZE in kB>/nr_hugepages;\n"
	        "                       fewer pages than asked (fragmented memory) is an error\n"
	        "  --hugetlb-size SIZE  the pool's page size (default: the PMD size; K/M/G)\n"
	        "  --force              a pool of more than %d%% of MemTotal (refused without it;\n"
	        "                       above %d%% a warning)\n"
	        "  --persist            also keep these settings across reboots: THP enabled and\n"
	        "                       defrag in " TMPFILES_REL " (systemd-tmpfiles),\n"
	        "                       the pool in " SYSCTL_REL " (vm.nr_hugepages;\n"
	        "                       a pool of another page size goes to the tmpfiles.d file);\n"
	        "                       settings persisted before and not given now stay; a file\n"
	        "                       there that this command did not write is never replaced\n"
	        "  --undo               remove those two files, only where this command wrote them\n"
	        "                       (their first line says so), and say what they set; the\n"
	        "                       running settings are NOT changed (it prints the command\n"
	        "                       that puts back what they were before --persist); with\n"
	        "                       --thp/--defrag/--hugetlb those are written now too\n"
	        "  -n, --dry-run        print the writes and the files, make none (needs no root)\n"
	        "  --root DIR           work under DIR instead of / (sysfs and /etc: for tests and\n"
	        "                       building images; needs no root); MemTotal from\n"
	        "                       DIR/proc/meminfo when there is one\n"
	        "  -h, --help           this help\n"
	        "\n"
	        "Exit status: 0; 1 not root, a write failed or did not take, a pool size that is not\n"
	        "a multiple of its page size or too large, a file there that this command did not\n"
	        "write; 2 usage error.  Nothing is written before every check has passed; a sysfs\n"
	        "write that fails leaves the files as they were.\n", POOL_REFUSE_PCT, POOL_WARN_PCT);
}

int et_cmd_setup(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "thp", required_argument, NULL, 't' },
		{ "defrag", required_argument, NULL, 'd' },
		{ "hugetlb", required_argument, NULL, 'b' },
		{ "hugetlb-pages", required_argument, NULL, 'p' },
		{ "hugetlb-size", required_argument, NULL, 's' },
		{ "force", no_argument, NULL, 'f' },
		{ "persist", no_argument, NULL, 'P' },
		{ "undo", no_argument, NULL, 'U' },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "root", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *thp = NULL, *defrag = NULL, *pages = NULL, *bytes_arg = NULL, *root = "/";
	uint64_t hsize = 0, npages = 0, pool_bytes = 0;
	bool dry = false, force = false, persist = false, undo_it = false;
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
		case 'b':
			if (et_parse_size(optarg, &pool_bytes))
				return et_tool_usage("--hugetlb %s: give a size in bytes with K/M/G (e.g. 1G, "
				                     "512M)", optarg);
			bytes_arg = optarg;
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
		case 'f':
			force = true;
			break;
		case 'P':
			persist = true;
			break;
		case 'U':
			undo_it = true;
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
	if (pages && bytes_arg)
		return et_tool_usage("give --hugetlb SIZE or --hugetlb-pages N, not both");
	if (hsize && !pages && !bytes_arg)
		return et_tool_usage("--hugetlb-size goes with --hugetlb or --hugetlb-pages");
	if (persist && undo_it)
		return et_tool_usage("give --persist or --undo, not both");
	bool pool = pages || bytes_arg;
	if (!thp && !defrag && !pool && !undo_it)
		return et_tool_usage("nothing to do: give --thp, --defrag, --hugetlb, --hugetlb-pages or "
		                     "--undo");
	bool real = !strcmp(root, "/");
	struct stat st;
	if (!real && (stat(root, &st) != 0 || !S_ISDIR(st.st_mode))) {
		et_tool_err("--root %s: not a directory", root);
		return ET_EXIT_BAD;
	}

	char asked[96] = "";
	if (pool) {
		if (!hsize) {
			struct et_sysinfo si;
			et_sysinfo_read_pmd(&si, root);
			hsize = si.pmd_size;
		}
		if (bytes_arg) {
			char hs[16], lo_s[16], hi_s[16];
			if (pool_bytes % hsize) {
				uint64_t lo_b = pool_bytes / hsize * hsize;
				et_tool_err("--hugetlb %s: not a multiple of the %s huge page size (%s or %s, or "
				            "--hugetlb-pages N)", bytes_arg, et_tool_size(hs, sizeof hs, hsize),
				            et_tool_size(lo_s, sizeof lo_s, lo_b),
				            et_tool_size(hi_s, sizeof hi_s, lo_b + hsize));
				return ET_EXIT_BAD;
			}
			npages = pool_bytes / hsize;
			if (npages > LONG_MAX)
				return et_tool_usage("--hugetlb %s: too large", bytes_arg);
			snprintf(asked, sizeof asked, "--hugetlb %s", bytes_arg);
		} else {
			snprintf(asked, sizeof asked, "--hugetlb-pages %s", pages);
		}
		int rc = check_pool(root, real, asked, npages, hsize, force);
		if (rc)
			return rc;
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
	if (pool) {
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
		current(&ops[i], ops[i].was, sizeof ops[i].was);
	}

	/* The files: looked at (and, for --persist, composed) before anything
	 * is written. */
	struct conf cs[2];
	memset(cs, 0, sizeof cs);
	cs[0].rel = TMPFILES_REL;
	cs[0].tmpfiles = true;
	cs[1].rel = SYSCTL_REL;
	for (size_t i = 0; i < 2; i++) {
		snprintf(cs[i].path, sizeof cs[i].path, "%s%s", real ? "" : root, cs[i].rel);
		conf_load(&cs[i]);
	}
	if (persist) {
		/* vm.nr_hugepages sizes the pool of the default huge page size
		 * (Hugepagesize); a pool of another size is a tmpfiles.d line. */
		uint64_t dflt = meminfo(root, real, "Hugepagesize", NULL, 0);
		for (size_t i = 0; i < n; i++) {
			if (ops[i].choice || hsize != (dflt ? dflt : hsize))
				conf_set(&cs[0], ops[i].rel, ops[i].value, ops[i].was);
			else
				conf_set(&cs[1], "vm.nr_hugepages", ops[i].value, ops[i].was);
		}
		for (size_t i = 0; i < 2; i++) {
			if (!cs[i].touched)
				continue;
			if (cs[i].exists && !cs[i].ours) {
				et_tool_err("%s: not written by enormoustext setup (%s): not replaced; move it "
				            "away or put the settings in it by hand", cs[i].path, cs[i].foreign);
				return ET_EXIT_BAD;
			}
			conf_render(&cs[i]);
		}
	}

	if (!dry && real && geteuid() != 0) {
		et_tool_err("needs root to write %s: run it as root (sudo), or see the writes with "
		            "--dry-run", n ? ops[0].path : cs[0].path);
		return ET_EXIT_BAD;
	}
	for (size_t i = 0; i < n; i++) {
		printf("%s %s: %s (was %s)\n", dry ? "would write" : "write", ops[i].shown, ops[i].value,
		       ops[i].was);
		fflush(stdout);
		if (!dry) {
			int rc = do_write(&ops[i]);
			if (rc) {
				if (persist)
					et_tool_err("nothing persisted: %s and %s are as they were", cs[0].path,
					            cs[1].path);
				return rc;
			}
		}
	}
	if (undo_it)
		return undo(cs, 2, dry);
	if (!persist)
		return ET_EXIT_OK;
	for (size_t i = 0; i < 2; i++) {
		if (!cs[i].touched)
			continue;
		printf("%s %s (%s at boot):\n", dry ? "would write" : "write", cs[i].path,
		       cs[i].tmpfiles ? "systemd-tmpfiles applies it" : "systemd-sysctl applies it");
		for (const char *l = cs[i].text; *l;) {
			const char *e = strchr(l, '\n');
			size_t len = e ? (size_t)(e - l) : strlen(l);
			printf("    %.*s\n", (int)len, l);
			l += len + (e != NULL);
		}
		fflush(stdout);
		if (!dry) {
			int rc = conf_write(&cs[i], root, real);
			if (rc)
				return rc;
		}
	}
	return ET_EXIT_OK;
}
