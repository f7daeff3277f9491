/*
 * tools/enormoustext/cmd/setup_persist.c — the two boot-time files of
 * `enormoustext setup --persist` and their removal (--undo); setup.c
 * parses the command line and makes the running settings' writes.
 *
 *   /etc/tmpfiles.d/enormoustext.conf   `w` lines for THP enabled and
 *       defrag (and a pool of a page size other than the default one),
 *       applied at boot by systemd-tmpfiles;
 *   /etc/sysctl.d/60-enormoustext.conf  vm.nr_hugepages for a pool of the
 *       default huge page size, applied at boot by systemd-sysctl.
 * Each starts with a marker line; a file there without it is someone
 * else's: refused, never replaced, never removed.  A setting already in
 * our file and not given now stays; each keeps, in a "# was VALUE"
 * comment, what it was before it was first persisted.
 *
 * Owns: the two files: reading them (is it ours, what does it set),
 * composing, writing (beside and renamed in, fsync'ed, and their
 * directory), removing; what --undo prints to put the settings back; the
 * boot order of systemd's directories (a later file that sets the same
 * wins: a warning names it).
 * May call: core (outfile: the files; json), common.c, msg.c.
 * Never: writes a file other than those two; replaces or removes a file
 * without the marker; changes a running setting (setup.c does).
 */
#include "setup.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* (setup.h) */
void et_setup_conf_load(struct conf *c)
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

/* (setup.h) */
void et_setup_conf_set(struct conf *c, const char *key, const char *value, const char *was)
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

void et_setup_conf_render(struct conf *c)
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
static void conf_json(const struct conf *c, struct et_json *J)
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

/* (setup.h) */
int et_setup_undo(struct conf *cs, size_t nc, bool dry, const char *root, bool real, struct et_json *J)
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
			conf_json(c, J);
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

/* (setup.h) */
int et_setup_persist(struct conf *cs, size_t nc, bool dry, const char *root, bool real, struct et_json *J)
{
	int rc = ET_EXIT_OK;
	if (J)
		et_json_arr(J, "files");
	for (size_t i = 0; i < nc && !rc; i++) {
		if (!cs[i].touched)
			continue;
		if (J) {
			et_json_obj(J, NULL);
			et_json_str(J, "path", cs[i].path);
			et_json_str(J, "action", dry ? "would write" : "write");
			et_json_str(J, "applied_by", cs[i].tmpfiles ? "systemd-tmpfiles" : "systemd-sysctl");
			conf_json(&cs[i], J);
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
	return rc;
}
