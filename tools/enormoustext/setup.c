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
#include "opts.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
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

/* The settings of c as JSON members of the current object. */
static void conf_json(const struct conf *c)
{
	et_json_arr(J, "settings");
	for (size_t k = 0; k < c->n; k++) {
		et_json_obj_flat(J, NULL);
		et_json_str(J, "key", c->tmpfiles ? short_key(c->e[k].key) : c->e[k].key);
		et_json_str(J, "value", c->e[k].value);
		if (c->e[k].was[0])
			et_json_str(J, "was", c->e[k].was);
		else
			et_json_null(J, "was");
		et_json_obj_end(J);
	}
	et_json_arr_end(J);
}

/* root: the --root given ("/" for none): the commands it prints to put the
 * settings back name it too, or they would change this system's. */
static int undo(struct conf *cs, size_t nc, bool dry, const char *root, bool real)
{
	/* the commands that put back the "# was" values: THP settings in the
	 * first, each pool in one of its own */
	char restore[4][256];
	size_t nr = 1;
	restore[0][0] = '\0';
	bool any = false;
	if (J)
		et_json_arr(J, "files");
	for (size_t i = 0; i < nc; i++) {
		struct conf *c = &cs[i];
		if (!c->exists)
			continue;
		if (!c->ours) {
			if (J) {
				et_json_obj(J, NULL);
				et_json_str(J, "path", c->path);
				et_json_str(J, "action", "left alone");
				et_json_str(J, "reason", c->foreign);
				et_json_obj_end(J);
			} else {
				printf("left alone %s: not written by enormoustext setup (%s)\n", c->path, c->foreign);
			}
			continue;
		}
		any = true;
		if (J) {
			et_json_obj(J, NULL);
			et_json_str(J, "path", c->path);
			et_json_str(J, "action", dry ? "would remove" : "remove");
			conf_json(c);
			et_json_obj_end(J);
		} else {
			printf("%s %s (it set", dry ? "would remove" : "remove", c->path);
		}
		for (size_t k = 0; k < c->n; k++) {
			const char *key = c->tmpfiles ? short_key(c->e[k].key) : c->e[k].key;
			if (!J)
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
		if (!J)
			printf("%s)\n", c->n ? "" : " nothing");
		fflush(stdout);
		if (!dry && (unlink(c->path) != 0 || sync_dir_of(c->path) != 0)) {
			et_tool_err("%s: cannot remove it: %s", c->path, strerror(errno));
			if (J) {
				et_json_arr_end(J);
				et_json_obj_end(J);
				et_json_end(J);
			}
			return ET_EXIT_BAD;
		}
	}
	if (J)
		et_json_arr_end(J);
	if (!any) {
		if (J)
			et_json_arr(J, "restore");
		else
			printf("nothing to undo: no %s or %s written by enormoustext setup --persist\n",
			       cs[0].path, cs[1].path);
		return ET_EXIT_OK;
	}
	bool have = false;
	for (size_t i = 0; i < nr; i++)
		have |= restore[i][0] != '\0';
	char rootarg[PATH_MAX + 16] = "";
	if (!real)
		snprintf(rootarg, sizeof rootarg, " --root %s", root);
	if (J) {
		et_json_arr(J, "restore");
	} else {
		printf("the running settings are unchanged%s\n", have ? "; to put back what they were "
		       "before --persist:" : " (no earlier values recorded)");
	}
	for (size_t i = 0; i < nr; i++) {
		if (!restore[i][0])
			continue;
		if (J) {
			char cmd[PATH_MAX + 320];
			snprintf(cmd, sizeof cmd, "enormoustext setup%s%s", rootarg, restore[i]);
			et_json_str(J, NULL, cmd);
		} else {
			printf("  enormoustext setup%s%s\n", rootarg, restore[i]);
		}
	}
	return ET_EXIT_OK;
}

/* ------------------------------------------------------ boot order */

/* The directories systemd-sysctl (and `sysctl --system`) and
 * systemd-tmpfiles read, most important first: of two files with one name
 * the first directory's is read, the others' ignored; the files are then
 * applied in the order of their names. */
static const char *const sysctl_dirs[] = { "/etc/sysctl.d", "/run/sysctl.d", "/usr/local/lib/sysctl.d",
	                                   "/usr/lib/sysctl.d", "/lib/sysctl.d", NULL };
static const char *const tmpfiles_dirs[] = { "/etc/tmpfiles.d", "/run/tmpfiles.d", "/usr/local/lib/tmpfiles.d",
	                                     "/usr/lib/tmpfiles.d", "/lib/tmpfiles.d", NULL };

/* Whether the text of a sysctl file sets key (a "key = value" line, the key
 * with dots or slashes), or a tmpfiles.d file writes path (a `w` line);
 * the value into val. */
static bool sets_key(const char *text, const char *key, bool tmpfiles, char *val, size_t cap)
{
	bool found = false;
	for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		while (*l == ' ' || *l == '\t' || *l == '-')
			l++;
		if (*l == '#' || *l == ';')
			continue;
		char k[256], v[64];
		if (tmpfiles) {
			if (sscanf(l, "w%*[+-!=~]%*[ \t]%255s %*s %*s %*s %*s %63s", k, v) == 2 ||
			    sscanf(l, "w %255s %*s %*s %*s %*s %63s", k, v) == 2) {
				if (!strcmp(k, key)) {
					snprintf(val, cap, "%s", v);
					found = true;
				}
			}
			continue;
		}
		if (sscanf(l, "%255[^= \t] = %63s", k, v) != 2 && sscanf(l, "%255[^= \t]=%63s", k, v) != 2)
			continue;
		for (char *p = k; *p; p++)
			if (*p == '/')
				*p = '.';
		if (!strcmp(k, key)) {
			snprintf(val, cap, "%s", v);
			found = true;     /* the last one counts */
		}
	}
	return found;
}

/* Files that systemd reads at boot and that set what ours (c) sets, read
 * after it (sysctl: a later name wins) or before it (tmpfiles.d: for one
 * path, the first name wins): a warning for each, naming it.  How many. */
static size_t overridden(const struct conf *c, const char *root, bool real)
{
	const char *const *dirs = c->tmpfiles ? tmpfiles_dirs : sysctl_dirs;
	const char *ours = strrchr(c->rel, '/') + 1;
	size_t warned = 0;
	for (size_t d = 0; dirs[d]; d++) {
		char dir[PATH_MAX];
		snprintf(dir, sizeof dir, "%s%s", real ? "" : root, dirs[d]);
		DIR *dh = opendir(dir);
		if (!dh)
			continue;
		for (struct dirent *e; (e = readdir(dh));) {
			size_t l = strlen(e->d_name);
			if (l < 6 || strcmp(e->d_name + l - 5, ".conf") || !strcmp(e->d_name, ours))
				continue;
			int cmp = strcmp(e->d_name, ours);
			if (c->tmpfiles ? cmp > 0 : cmp < 0)
				continue;
			/* a file of the same name in a directory read first hides it */
			bool hidden = false;
			for (size_t d2 = 0; d2 < d && !hidden; d2++) {
				char other[PATH_MAX + 256];
				struct stat st;
				snprintf(other, sizeof other, "%s%s/%s", real ? "" : root, dirs[d2], e->d_name);
				hidden = stat(other, &st) == 0;
			}
			if (hidden)
				continue;
			char path[PATH_MAX + 256], buf[65536], val[64];
			snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
			if (et_read_file(path, buf, sizeof buf) < 0)
				continue;
			for (size_t i = 0; i < c->n; i++) {
				if (!sets_key(buf, c->e[i].key, c->tmpfiles, val, sizeof val))
					continue;
				et_tool_err("warning: %s sets %s = %s too and %s: at boot %s wins over %s; take "
				            "the line out of it (or make it %s)", path,
				            c->tmpfiles ? short_key(c->e[i].key) : c->e[i].key, val,
				            c->tmpfiles ? "is read before ours" : "is read after ours", val, c->e[i].value,
				            c->e[i].value);
				warned++;
			}
		}
		closedir(dh);
	}
	if (!c->tmpfiles) {
		/* /etc/sysctl.conf: `sysctl --system` reads it last of all */
		char path[PATH_MAX], buf[65536], val[64];
		snprintf(path, sizeof path, "%s/etc/sysctl.conf", real ? "" : root);
		struct stat st;
		if (lstat(path, &st) == 0 && !S_ISLNK(st.st_mode) && et_read_file(path, buf, sizeof buf) >= 0)
			for (size_t i = 0; i < c->n; i++)
				if (sets_key(buf, c->e[i].key, false, val, sizeof val)) {
					et_tool_err("warning: %s sets %s = %s too and `sysctl --system` reads it after "
					            "ours: it wins over %s there; take the line out of it (or make it %s)",
					            path, c->e[i].key, val, c->e[i].value, c->e[i].value);
					warned++;
				}
	}
	return warned;
}

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
	.sections = { { NULL, options } },
	.tail = "Exit status: 0; 1 not root, a write failed or did not take, a pool size that\n"
	        "is not a multiple of its page size or too large, a file there that this\n"
	        "command did not write; 2 usage error.  Nothing is written before every check\n"
	        "has passed; a sysfs write that fails leaves the files as they were.\n",
};

const struct et_cmd_spec *et_cmd_setup_spec(void)
{
	return &spec;
}

int et_cmd_setup(int argc, char **argv)
{
	const char *thp = NULL, *defrag = NULL, *pages = NULL, *bytes_arg = NULL, *root = "/";
	uint64_t hsize = 0, npages = 0, pool_bytes = 0;
	bool dry = false, force = false, persist = false, undo_it = false, json = false;
	struct et_args a;
	et_args_init(&a, &spec, argc, argv);
	int c;
	while ((c = et_args_next(&a)) > 0) {
		switch (c) {
		case O_THP:
			thp = a.val;
			break;
		case O_DEFRAG:
			defrag = a.val;
			break;
		case O_HUGETLB:
			if (et_parse_size(a.val, &pool_bytes))
				return et_tool_usage("--hugetlb %s: give a size in bytes with K/M/G (e.g. 1G, "
				                     "512M)", a.val);
			bytes_arg = a.val;
			break;
		case O_HUGETLB_PAGES:
			if (et_tool_parse_u64(a.val, &npages) || npages > LONG_MAX)
				return et_tool_usage("--hugetlb-pages %s: give a number of pages (0 or more)",
				                     a.val);
			pages = a.val;
			break;
		case O_HUGETLB_SIZE:
			if (et_parse_size(a.val, &hsize) || hsize < 4096 || (hsize & (hsize - 1)))
				return et_tool_usage("--hugetlb-size %s: give a page size such as 2M or 1G",
				                     a.val);
			break;
		case O_FORCE:
			force = true;
			break;
		case O_PERSIST:
			persist = true;
			break;
		case O_UNDO:
			undo_it = true;
			break;
		case O_DRY_RUN:
			dry = true;
			break;
		case O_ROOT:
			root = a.val;
			break;
		case O_JSON:
			json = true;
			break;
		}
	}
	if (c < 0)
		return et_args_exit(c);
	if (a.nops)
		return et_tool_usage("unexpected argument '%s'", a.ops[0]);
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
	struct et_json j;
	if (json) {
		J = &j;
		et_json_init(&j, stdout);
		et_json_obj(&j, NULL);
		et_json_bool(&j, "dry_run", dry);
		et_json_str(&j, "root", root);
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
			printf("%s %s: %s (was %s)\n", dry ? "would write" : "write", ops[i].shown, ops[i].value,
			       ops[i].was);
		}
		fflush(stdout);
		if (!dry) {
			rc = do_write(&ops[i]);
			if (rc && persist)
				et_tool_err("nothing persisted: %s and %s are as they were", cs[0].path, cs[1].path);
		}
	}
	if (J)
		et_json_arr_end(J);
	if (undo_it && !rc) {
		rc = undo(cs, 2, dry, root, real);
		if (J && !rc)
			et_json_arr_end(J);   /* restore */
	} else if (persist && !rc) {
		if (J)
			et_json_arr(J, "files");
		for (size_t i = 0; i < 2 && !rc; i++) {
			if (!cs[i].touched)
				continue;
			if (J) {
				et_json_obj(J, NULL);
				et_json_str(J, "path", cs[i].path);
				et_json_str(J, "action", dry ? "would write" : "write");
				et_json_str(J, "applied_by", cs[i].tmpfiles ? "systemd-tmpfiles" : "systemd-sysctl");
				conf_json(&cs[i]);
				et_json_obj_end(J);
			} else {
				printf("%s %s (%s at boot):\n", dry ? "would write" : "write", cs[i].path,
				       cs[i].tmpfiles ? "systemd-tmpfiles applies it" : "systemd-sysctl applies it");
				for (const char *l = cs[i].text; *l;) {
					const char *e = strchr(l, '\n');
					size_t len = e ? (size_t)(e - l) : strlen(l);
					printf("    %.*s\n", (int)len, l);
					l += len + (e != NULL);
				}
			}
			fflush(stdout);
			if (!dry)
				rc = conf_write(&cs[i], root, real);
			/* another file that systemd reads at boot may set the same */
			if (!rc)
				overridden(&cs[i], root, real);
		}
		if (J)
			et_json_arr_end(J);
	}
	if (J) {
		et_json_obj_end(J);
		et_json_end(J);
		J = NULL;
	}
	return rc;
}
