/*
 * tools/enormoustext/cmd/setup.c — `enormoustext setup [--thp MODE]
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
 * The command as parse -> act -> print: this file parses the command line,
 * plans every write and checks it before any is made, makes the running
 * settings' writes and says each; setup_persist.c owns the two files.
 *
 * Owns: `setup`: its options, the writes to sysfs (THP policy, defrag, the
 * hugetlb pool), each printed before it is made and read back after; the
 * pool's size check against MemTotal; the order: every check before any
 * write.
 * May call: setup_persist.c (the two files), core (sysinfo: the PMD size;
 * options: sizes; json), common.c, output.c (messages), msg.c, opts.c.
 * Never: writes anything --dry-run was given for; writes a file other than
 * those settings and the two files; replaces or removes a file without the
 * marker.
 */
#include "setup.h"
#include "opts.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* --json: the report goes here instead of the lines (NULL: the lines). */
static struct et_json *J;

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


/* ------------------------------------------------------------ the command */


#define STR_(x) #x
#define STR(x) STR_(x)

enum { O_THP = 1, O_DEFRAG, O_HUGETLB, O_HUGETLB_PAGES, O_HUGETLB_SIZE, O_FORCE, O_PERSIST, O_UNDO, O_DRY_RUN,
       O_ROOT, O_JSON };

static const struct et_opt options[] = {
	{ "thp", 0, "MODE", THP_DIR "/enabled", O_THP, 0, 0, 0, "always madvise never", 0 },
	{ "defrag", 0, "MODE", THP_DIR "/defrag", O_DEFRAG, 0, 0, 0,
	  "always defer defer+madvise madvise never", 0 },
	{ "hugetlb", 0, "SIZE",
	  "size of the hugetlb pool in bytes (K/M/G: 1G, 512M,\n"
	  "2048K), a multiple of its page size; 0 empties it",
	  O_HUGETLB, 0, 1, 0, NULL, ET_COMP_NONE },
	{ "hugetlb-pages", 0, "N",
	  "size of the hugetlb pool, in pages: /sys/kernel/mm/\n"
	  "hugepages/hugepages-<SIZE in kB>/nr_hugepages; fewer\n"
	  "pages than asked (fragmented memory) is an error",
	  O_HUGETLB_PAGES, 0, 1, 0, NULL, ET_COMP_NONE },
	{ "hugetlb-size", 0, "SIZE", "the pool's page size (default: the PMD size; K/M/G)", O_HUGETLB_SIZE, 0, 0,
	  0, NULL, ET_COMP_NONE },
	{ "force", 0, NULL,
	  "a pool of more than " STR(POOL_REFUSE_PCT) "% of MemTotal (refused without\n"
	  "it; above " STR(POOL_WARN_PCT) "% a warning)",
	  O_FORCE, 0, 0, 0, NULL, 0 },
	{ "persist", 0, NULL,
	  "also keep these settings across reboots: THP enabled\n"
	  "and defrag in " TMPFILES_REL "\n"
	  "(systemd-tmpfiles), the pool in\n"
	  SYSCTL_REL " (vm.nr_hugepages;\n"
	  "a pool of another page size goes to the tmpfiles.d\n"
	  "file); settings persisted before and not given now\n"
	  "stay; a file there that this command did not write is\n"
	  "never replaced; a file of /etc/sysctl.d, /run/sysctl.d\n"
	  "or /usr/lib/sysctl.d read after ours that sets\n"
	  "vm.nr_hugepages too wins at boot: a warning names it",
	  O_PERSIST, 0, 2, 0, NULL, 0 },
	{ "undo", 0, NULL,
	  "remove those two files, only where this command wrote\n"
	  "them (their first line says so), and say what they\n"
	  "set; the running settings are NOT changed (it prints\n"
	  "the command that puts back what they were before\n"
	  "--persist, with --root DIR when one was given); with\n"
	  "--thp/--defrag/--hugetlb those are written now too",
	  O_UNDO, 0, 2, 0, NULL, 0 },
	{ "dry-run", 'n', NULL, "print the writes and the files, make none (needs no root)", O_DRY_RUN, 0, 0, 0,
	  NULL, 0 },
	{ "root", 0, "DIR",
	  "work under DIR instead of / (sysfs and /etc: for tests\n"
	  "and building images; needs no root); MemTotal from\n"
	  "DIR/proc/meminfo when there is one",
	  O_ROOT, 0, 0, 0, NULL, ET_COMP_DIR },
	{ "json", 0, NULL,
	  "JSON on stdout instead of the lines: dry_run, root,\n"
	  "writes (path, value, was), files (path, action,\n"
	  "settings), restore (the commands --undo prints),\n"
	  "warnings",
	  O_JSON, 0, 0, 0, NULL, 0 },
	{ NULL, 0, NULL, NULL, 0, 0, 0, 0, NULL, 0 },
};

static const struct et_cmd_spec spec = {
	.name = "setup",
	.about = "Change the settings huge text depends on (root only).  Every write is printed\n"
	         "(\"write FILE: VALUE (was OLD)\") before it is made and read back after it.\n",
	.sections = { { NULL, options, NULL } },
	.tail = "Exit status: 0; 1 not root, a write failed or did not take, a pool size that\n"
	        "is not a multiple of its page size or too large, a file there that this\n"
	        "command did not write; 2 usage error.  Nothing is written before every check\n"
	        "has passed; a sysfs write that fails leaves the files as they were.\n",
};

const struct et_cmd_spec *et_cmd_setup_spec(void)
{
	return &spec;
}

/* What the command line asks. */
struct sargs {
	const char *thp, *defrag, *pages, *bytes_arg, *root;
	uint64_t hsize, npages, pool_bytes;
	bool dry, force, persist, undo_it, json;
	bool pool;                 /* --hugetlb or --hugetlb-pages */
	bool real;                 /* no --root: this system */
};

/* The command line into s.  false: stop with *rc. */
static bool parse(int argc, char **argv, struct sargs *s, int *rc)
{
	struct et_args a;
	et_args_init(&a, &spec, argc, argv);
	int c;
	*rc = ET_EXIT_OK;
	while (!*rc && (c = et_args_next(&a)) > 0) {
		switch (c) {
		case O_THP:
			s->thp = a.val;
			break;
		case O_DEFRAG:
			s->defrag = a.val;
			break;
		case O_HUGETLB:
			if (et_parse_size(a.val, &s->pool_bytes))
				*rc = et_tool_usage("--hugetlb %s: give a size in bytes with K/M/G (e.g. 1G, "
				                    "512M)", a.val);
			s->bytes_arg = a.val;
			break;
		case O_HUGETLB_PAGES:
			if (et_tool_parse_u64(a.val, &s->npages) || s->npages > LONG_MAX)
				*rc = et_tool_usage("--hugetlb-pages %s: give a number of pages (0 or more)",
				                    a.val);
			s->pages = a.val;
			break;
		case O_HUGETLB_SIZE:
			if (et_parse_size(a.val, &s->hsize) || s->hsize < 4096 || (s->hsize & (s->hsize - 1)))
				*rc = et_tool_usage("--hugetlb-size %s: give a page size such as 2M or 1G",
				                    a.val);
			break;
		case O_FORCE:
			s->force = true;
			break;
		case O_PERSIST:
			s->persist = true;
			break;
		case O_UNDO:
			s->undo_it = true;
			break;
		case O_DRY_RUN:
			s->dry = true;
			break;
		case O_ROOT:
			s->root = a.val;
			break;
		case O_JSON:
			s->json = true;
			break;
		}
	}
	if (*rc)
		return false;
	if (c < 0)
		*rc = et_args_exit(c);
	else if (a.nops)
		*rc = et_tool_usage("unexpected argument '%s'", a.ops[0]);
	else if (s->pages && s->bytes_arg)
		*rc = et_tool_usage("give --hugetlb SIZE or --hugetlb-pages N, not both");
	else if (s->hsize && !s->pages && !s->bytes_arg)
		*rc = et_tool_usage("--hugetlb-size goes with --hugetlb or --hugetlb-pages");
	else if (s->persist && s->undo_it)
		*rc = et_tool_usage("give --persist or --undo, not both");
	else if (!s->thp && !s->defrag && !s->pages && !s->bytes_arg && !s->undo_it)
		*rc = et_tool_usage("nothing to do: give --thp, --defrag, --hugetlb, --hugetlb-pages or "
		                    "--undo");
	else
		return true;
	return false;
}

/* The pool in pages of its page size, checked against memory. */
static int plan_pool(struct sargs *s)
{
	char asked[96] = "";
	if (!s->hsize) {
		struct et_sysinfo si;
		et_sysinfo_read_pmd(&si, s->root);
		s->hsize = si.pmd_size;
	}
	if (s->bytes_arg) {
		char hs[16], lo_s[16], hi_s[16];
		if (s->pool_bytes % s->hsize) {
			uint64_t lo_b = s->pool_bytes / s->hsize * s->hsize;
			et_tool_err("--hugetlb %s: not a multiple of the %s huge page size (%s or %s, or "
			            "--hugetlb-pages N)", s->bytes_arg, et_tool_size(hs, sizeof hs, s->hsize),
			            et_tool_size(lo_s, sizeof lo_s, lo_b),
			            et_tool_size(hi_s, sizeof hi_s, lo_b + s->hsize));
			return ET_EXIT_BAD;
		}
		s->npages = s->pool_bytes / s->hsize;
		if (s->npages > LONG_MAX)
			return et_tool_usage("--hugetlb %s: too large", s->bytes_arg);
		snprintf(asked, sizeof asked, "--hugetlb %s", s->bytes_arg);
	} else {
		snprintf(asked, sizeof asked, "--hugetlb-pages %s", s->pages);
	}
	return check_pool(s->root, s->real, asked, s->npages, s->hsize, s->force);
}

/* The running settings' writes (at most three), each file there and its
 * value now read. */
static int plan_writes(const struct sargs *s, struct write_op ops[3], size_t *np)
{
	size_t n = 0;
	if (s->thp) {
		snprintf(ops[n].rel, sizeof ops[n].rel, THP_DIR "/enabled");
		snprintf(ops[n].value, sizeof ops[n].value, "%s", s->thp);
		ops[n++].choice = true;
	}
	if (s->defrag) {
		snprintf(ops[n].rel, sizeof ops[n].rel, THP_DIR "/defrag");
		snprintf(ops[n].value, sizeof ops[n].value, "%s", s->defrag);
		ops[n++].choice = true;
	}
	if (s->pool) {
		snprintf(ops[n].rel, sizeof ops[n].rel, "/sys/kernel/mm/hugepages/hugepages-%llukB/nr_hugepages",
		         (unsigned long long)(s->hsize >> 10));
		snprintf(ops[n].value, sizeof ops[n].value, "%llu", (unsigned long long)s->npages);
		ops[n++].choice = false;
	}
	*np = n;
	for (size_t i = 0; i < n; i++) {
		snprintf(ops[i].path, sizeof ops[i].path, "%s%s", s->real ? "" : s->root, ops[i].rel);
		ops[i].shown = ops[i].path;
		if (access(ops[i].path, F_OK) != 0) {
			et_tool_err("%s: %s (%s)", ops[i].path, strerror(errno),
			            ops[i].choice ? "a kernel without transparent huge pages?"
			                          : "no hugetlb pool of that page size");
			return ET_EXIT_BAD;
		}
		current(&ops[i], ops[i].was, sizeof ops[i].was);
	}
	return ET_EXIT_OK;
}

/* The files: looked at (and, for --persist, composed) before anything is
 * written. */
static int plan_files(const struct sargs *s, const struct write_op *ops, size_t n, struct conf cs[2])
{
	memset(cs, 0, 2 * sizeof *cs);
	cs[0].rel = TMPFILES_REL;
	cs[0].tmpfiles = true;
	cs[1].rel = SYSCTL_REL;
	for (size_t i = 0; i < 2; i++) {
		snprintf(cs[i].path, sizeof cs[i].path, "%s%s", s->real ? "" : s->root, cs[i].rel);
		et_setup_conf_load(&cs[i]);
	}
	if (!s->persist)
		return ET_EXIT_OK;
	/* vm.nr_hugepages sizes the pool of the default huge page size
	 * (Hugepagesize); a pool of another size is a tmpfiles.d line. */
	uint64_t dflt = meminfo(s->root, s->real, "Hugepagesize", NULL, 0);
	for (size_t i = 0; i < n; i++) {
		if (ops[i].choice || s->hsize != (dflt ? dflt : s->hsize))
			et_setup_conf_set(&cs[0], ops[i].rel, ops[i].value, ops[i].was);
		else
			et_setup_conf_set(&cs[1], "vm.nr_hugepages", ops[i].value, ops[i].was);
	}
	for (size_t i = 0; i < 2; i++) {
		if (!cs[i].touched)
			continue;
		if (cs[i].exists && !cs[i].ours) {
			et_tool_err("%s: not written by enormoustext setup (%s): not replaced; move it "
			            "away or put the settings in it by hand", cs[i].path, cs[i].foreign);
			return ET_EXIT_BAD;
		}
		et_setup_conf_render(&cs[i]);
	}
	return ET_EXIT_OK;
}

/* Every check passed: the writes, each said before it is made, then the
 * files (--persist) or their removal (--undo). */
static int act(const struct sargs *s, struct write_op *ops, size_t n, struct conf cs[2])
{
	struct et_json j;
	if (s->json) {
		J = &j;
		et_json_init(&j, stdout);
		et_json_obj(&j, NULL);
		et_json_bool(&j, "dry_run", s->dry);
		et_json_str(&j, "root", s->root);
		et_json_arr(&j, "writes");
	}
	int rc = ET_EXIT_OK;
	for (size_t i = 0; i < n && !rc; i++) {
		if (J) {
			et_json_obj_flat(J, NULL);
			et_json_str(J, "path", ops[i].shown);
			et_json_str(J, "value", ops[i].value);
			et_json_str(J, "was", ops[i].was);
			et_json_obj_end(J);
		} else {
			printf("%s %s: %s (was %s)\n", s->dry ? "would write" : "write", ops[i].shown,
			       ops[i].value, ops[i].was);
		}
		fflush(stdout);
		if (!s->dry) {
			rc = do_write(&ops[i]);
			if (rc && s->persist)
				et_tool_err("nothing persisted: %s and %s are as they were", cs[0].path, cs[1].path);
		}
	}
	if (J)
		et_json_arr_end(J);
	if (s->undo_it && !rc) {
		rc = et_setup_undo(cs, 2, s->dry, s->root, s->real, J);
		if (J && !rc)
			et_json_arr_end(J);   /* restore */
	} else if (s->persist && !rc) {
		rc = et_setup_persist(cs, 2, s->dry, s->root, s->real, J);
	}
	if (J) {
		et_json_obj_end(J);
		et_json_end(J);
		J = NULL;
	}
	return rc;
}

int et_cmd_setup(int argc, char **argv)
{
	struct sargs s;
	memset(&s, 0, sizeof s);
	s.root = "/";
	int rc;
	if (!parse(argc, argv, &s, &rc))
		return rc;
	s.pool = s.pages || s.bytes_arg;
	s.real = !strcmp(s.root, "/");
	struct stat st;
	if (!s.real && (stat(s.root, &st) != 0 || !S_ISDIR(st.st_mode))) {
		et_tool_err("--root %s: not a directory", s.root);
		return ET_EXIT_BAD;
	}
	if (s.pool && (rc = plan_pool(&s)) != 0)
		return rc;
	struct write_op ops[3];
	size_t n = 0;
	if ((rc = plan_writes(&s, ops, &n)) != 0)
		return rc;
	struct conf cs[2];
	if ((rc = plan_files(&s, ops, n, cs)) != 0)
		return rc;
	if (!s.dry && s.real && geteuid() != 0) {
		et_tool_err("needs root to write %s: run it as root (sudo), or see the writes with "
		            "--dry-run", n ? ops[0].path : cs[0].path);
		return ET_EXIT_BAD;
	}
	return act(&s, ops, n, cs);
}
