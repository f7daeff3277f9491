/*
 * tools/enormoustext/cmd/enable_hostwide.c — `enable --binary PATH`,
 * `enable --all` and their `disable`: the library for one program, or for
 * every one, host-wide.
 *
 * /etc/ld.so.preload names the library through a path of its own
 * (/etc/enormoustext/preload/NAME, a symbolic link made here, see
 * core/hostwide.h: /etc, so that a read-only /usr is no obstacle and
 * nothing is left in a directory a package owns), and
 * /etc/enormoustext/binaries lists the programs that act ('*': every one,
 * by the settings of /etc/enormoustext/enormoustext.conf, core/hostconf.h);
 * every other program loads the library and its constructor stands down at
 * once (runtime/hostwide.c).  The ld.so.preload there before is kept byte
 * for byte (ld.so.preload.orig, or a note that there was none:
 * ld.so.preload.none) and put back when the list becomes empty.  The list
 * before /etc/ld.so.preload, so the entry never names a library without its
 * list; a change that fails half way is undone.
 *
 * Owns: the host-wide list, /etc/ld.so.preload's entry and its backup, the
 * link, the settings file; the program's checks and the trial run; --list's
 * host-wide part; the order of --all's steps (settings, the daemon of
 * enable_daemon.c, --preload's entry), each undone when a later one fails.
 * May call: enable_files.c, preload.c (the library, ld.so.preload's
 * entry), spawn.c (the trial run), core (hostconf, hostwide names, the
 * option table), msg.c, common.c.
 * Never: writes the loader's list without first running a program with the
 * library loaded through the new path; writes a list or settings file it
 * did not write (no MARKER).
 */
#include "enable.h"
#include "preload.h"

#include "core/hostconf.h"
#include "core/hostwide.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct hw {
	char lib[PATH_MAX + 8];    /* the library, absolute */
	char entry[PATH_MAX + 64]; /* the path ld.so.preload names: /etc/enormoustext/preload/NAME */
	char link[PATH_MAX + 64];  /* the same under --root */
	char preload[PATH_MAX], list[PATH_MAX], backup[PATH_MAX], none[PATH_MAX], etcdir[PATH_MAX];
};

static void hw_paths(const struct ctx *c, struct hw *h)
{
	et_enable_rooted(c, h->preload, sizeof h->preload, ET_HOSTWIDE_PRELOAD);
	et_enable_rooted(c, h->list, sizeof h->list, ET_HOSTWIDE_LIST);
	et_enable_rooted(c, h->backup, sizeof h->backup, LIST_BACKUP);
	et_enable_rooted(c, h->none, sizeof h->none, LIST_NONE);
	et_enable_rooted(c, h->etcdir, sizeof h->etcdir, "/etc");
}

/* Where removing the link's empty directories stops: the directory the
 * link's "enormoustext/preload" is in (/etc under --root, or LIBDIR for an
 * entry an older version made). */
static void link_stop(const struct hw *h, char *out, size_t cap)
{
	snprintf(out, cap, "%s", h->link);
	for (int i = 0; i < 3; i++) {
		char *s = strrchr(out, '/');
		if (s)
			*s = '\0';
	}
}

static void hw_entry_for(const struct ctx *c, struct hw *h)
{
	const char *slash = strrchr(h->lib, '/');
	snprintf(h->entry, sizeof h->entry, ET_HOSTWIDE_LINKDIR "/%s", slash + 1);
	snprintf(h->link, sizeof h->link, "%s%s", c->root, h->entry);
}

/* The paths of the list (malloc'd copies), in order. */
struct list {
	char **p;
	size_t n;
	bool exists;
};

static int list_read(const struct hw *h, struct list *l)
{
	memset(l, 0, sizeof *l);
	char *buf;
	size_t len;
	int e = et_tool_slurp(h->list, &buf, &len);
	if (e == -ENOENT)
		return 0;
	if (e) {
		et_tool_err("%s: %s", h->list, e == -EINVAL ? "not a regular file" : strerror(-e));
		return ET_EXIT_BAD;
	}
	if (!et_enable_has_marker(buf)) {
		et_tool_err("%s exists and was not written by 'enormoustext enable' (no '%s' first line): "
		            "not changed", h->list, MARKER);
		free(buf);
		return ET_EXIT_BAD;
	}
	l->exists = true;
	for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
		line += strspn(line, " \t");
		size_t n = strlen(line);
		while (n && strchr(" \t\r", line[n - 1]))
			line[--n] = '\0';
		if (!n || line[0] == '#')
			continue;
		char **np = realloc(l->p, (l->n + 1) * sizeof *np);
		if (!np)
			break;
		l->p = np;
		l->p[l->n++] = strdup(line);
	}
	free(buf);
	return 0;
}

static void list_free(struct list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->p[i]);
	free(l->p);
}

static char *list_text(const struct list *l, size_t *len)
{
	char *t = NULL;
	FILE *f = open_memstream(&t, len);
	if (!f)
		return NULL;
	fprintf(f, MARKER " the programs libenormoustext acts in when " ET_HOSTWIDE_PRELOAD " loads it\n"
	           "# (one resolved path a line; 'enormoustext disable --binary PATH' removes one)\n");
	for (size_t i = 0; i < l->n; i++)
		fprintf(f, "%s\n", l->p[i]);
	fclose(f);
	return t;
}

/* Does the loader's list hold entry as one of its words? */
static bool preload_has(const char *buf, const char *entry)
{
	size_t n = strlen(entry);
	for (const char *p = buf; *p;) {
		if (*p == '#') {
			p += strcspn(p, "\n");
			continue;
		}
		size_t w = strcspn(p, " \t\n:");
		if (w == n && !strncmp(p, entry, n))
			return true;
		p += w ? w : 1;
	}
	return false;
}


/* The program: a dynamically linked ELF executable of this architecture;
 * its resolved path into real. */
static int check_program(const char *path, char *real, size_t cap)
{
	struct elf_facts f, h;
	const char *why;
	if (et_enable_elf_read(path, &f, &why) != 0) {
		et_tool_err("--binary %s: %s", path, why);
		return ET_EXIT_BAD;
	}
	if (f.type != ET_EXEC && f.type != ET_DYN) {
		et_tool_err("--binary %s: not an ELF executable", path);
		return ET_EXIT_BAD;
	}
	if (!f.interp) {
		et_tool_err("--binary %s: %s", path,
		            f.type == ET_EXEC ? "statically linked: the loader (and /etc/ld.so.preload) never runs for it"
		                              : "a shared library or a static PIE, not a dynamically linked program");
		return ET_EXIT_BAD;
	}
	if (et_enable_host_elf(&h) == 0 && (h.machine != f.machine || h.klass != f.klass)) {
		et_tool_err("--binary %s: built for another architecture than this system's library", path);
		return ET_EXIT_BAD;
	}
	if (access(path, X_OK) != 0) {
		et_tool_err("--binary %s: not executable", path);
		return ET_EXIT_BAD;
	}
	char buf[PATH_MAX];
	if (!realpath(path, buf) || strlen(buf) >= cap) {
		et_tool_err("--binary %s: cannot resolve the path: %s", path, strerror(errno));
		return ET_EXIT_BAD;
	}
	snprintf(real, cap, "%s", buf);
	return 0;
}

/* The link entry -> lib (replaced when it points elsewhere); *made says
 * whether it is new, *changed whether it was made or replaced.  0 or
 * ET_EXIT_BAD. */
static int make_link(const struct hw *h, bool *made, bool *changed)
{
	*made = false;
	*changed = false;
	char cur[PATH_MAX];
	ssize_t n = readlink(h->link, cur, sizeof cur - 1);
	if (n > 0) {
		cur[n] = '\0';
		if (!strcmp(cur, h->lib))
			return 0;
	} else if (errno != ENOENT) {
		et_tool_err("%s: exists and is not a symbolic link: not replaced", h->link);
		return ET_EXIT_BAD;
	}
	if (et_tool_make_parents(h->link))
		return ET_EXIT_BAD;
	char tmp[PATH_MAX + 80];
	snprintf(tmp, sizeof tmp, "%s.%ld.tmp", h->link, (long)getpid());
	unlink(tmp);
	if (symlink(h->lib, tmp) != 0 || rename(tmp, h->link) != 0) {
		et_tool_err("%s: cannot make the link: %s", h->link, strerror(errno));
		unlink(tmp);
		return ET_EXIT_BAD;
	}
	et_tool_sync_dir(h->link);
	*made = n <= 0;
	*changed = true;
	return 0;
}

/* A program run with LD_PRELOAD=the new path: exit 0 and not a word from
 * the loader, or one line naming what it said. */
static int trial(const struct hw *h, const char *prog)
{
	char env0[PATH_MAX + 80];
	snprintf(env0, sizeof env0, "LD_PRELOAD=%s", h->link);
	char *argv[] = { (char *)prog, NULL };
	char *envp[] = { env0, NULL };
	char *err = NULL;
	int rc = et_tool_capture(argv, envp, NULL, &err);
	bool quiet = !err || !err[0];
	if (rc != 0 || !quiet) {
		et_tool_err("trial run 'LD_PRELOAD=%s %s' failed (exit status %d%s%.200s): nothing written", h->link,
		            prog, rc, quiet ? "" : "; it said: ", quiet ? "" : et_tool_trim(err));
		free(err);
		return ET_EXIT_BAD;
	}
	free(err);
	return 0;
}

static const char *trial_program(void)
{
	return access("/bin/true", X_OK) == 0 ? "/bin/true" : "/usr/bin/true";
}

/* The directory of the list, the settings and the off switch is one the
 * library trusts (root's, not writable by group or others: as
 * runtime/hostwide.c checks it), or does not exist yet. */
static int check_etc_dir(const struct ctx *c)
{
	char d[PATH_MAX];
	et_enable_rooted(c, d, sizeof d, ET_HOSTWIDE_ETC);
	struct stat st;
	if (lstat(d, &st) != 0)
		return 0;
	const char *why = et_hostwide_untrusted(&st, true);
	if (why) {
		et_tool_err("%s is %s: the library trusts nothing in it (fix: chown root:root %s; chmod 755 %s): "
		            "nothing written", d, why, d, d);
		return ET_EXIT_BAD;
	}
	return 0;
}

static int enable_entry(struct ctx *c, const char *real);

int et_enable_binary(struct ctx *c, const char *path)
{
	char real[PATH_MAX];
	if (check_program(path, real, sizeof real))
		return ET_EXIT_BAD;
	snprintf(c->binary, sizeof c->binary, "%s", real);
	return enable_entry(c, real);
}

/* The list gets real (a resolved path, or ET_HOSTWIDE_ALL), and
 * /etc/ld.so.preload the entry when it has none. */
static int enable_entry(struct ctx *c, const char *real)
{
	struct hw h;
	hw_paths(c, &h);
	if (check_etc_dir(c))
		return ET_EXIT_BAD;
	if (et_tool_library(c->lib_opt, h.lib, sizeof h.lib) || et_enable_check_lib(h.lib))
		return ET_EXIT_BAD;
	hw_entry_for(c, &h);
	snprintf(c->lib, sizeof c->lib, "%s", h.lib);
	snprintf(c->entry, sizeof c->entry, "%s", h.entry);

	struct list l;
	if (list_read(&h, &l))
		return ET_EXIT_BAD;
	bool listed = false;
	for (size_t i = 0; i < l.n; i++)
		listed |= !strcmp(l.p[i], real);
	char *cur = NULL;
	size_t clen = 0;
	int e = et_tool_slurp(h.preload, &cur, &clen);
	if (e && e != -ENOENT) {
		et_tool_err("%s: %s: not changed", h.preload, e == -EINVAL ? "not a regular file" : strerror(-e));
		list_free(&l);
		return ET_EXIT_BAD;
	}
	bool had = e == 0;
	bool entered = had && preload_has(cur, h.entry);
	/* the new loader's list: what was there, byte for byte, and a line */
	size_t nlen = clen + strlen(h.entry) + 2;
	char *next = malloc(nlen + 1);
	if (!next) {
		free(cur);
		list_free(&l);
		et_tool_err("out of memory");
		return ET_EXIT_BAD;
	}
	nlen = (size_t)snprintf(next, nlen + 1, "%s%s%s\n", had ? cur : "",
	                        (had && clen && cur[clen - 1] != '\n') ? "\n" : "", h.entry);
	if (!listed) {
		char **np = realloc(l.p, (l.n + 1) * sizeof *np);
		if (np) {
			l.p = np;
			l.p[l.n++] = strdup(real);
		}
	}
	size_t ltlen = 0;
	char *lt = list_text(&l, &ltlen);
	int rc = 0;
	if (c->dry) {
		et_enable_say(c, "would check: LD_PRELOAD=%s %s (exit 0, nothing said)\n", h.link, trial_program());
		et_enable_say(c, "would link %s -> %s\n", h.link, h.lib);
		et_enable_event(c, "would link", h.link, "target", h.lib);
		et_enable_say(c, "would write %s:\n%s", h.list, lt ? lt : "");
		et_enable_event(c, "would write", h.list, "program", listed ? "already listed" : "listed");
		if (!entered) {
			et_enable_say(c, "would keep %s as it is now in %s\n", h.preload, had ? h.backup : h.none);
			et_enable_event(c, "would keep", h.preload, "in", had ? h.backup : h.none);
			et_enable_say(c, "would write %s:\n%s", h.preload, next);
			et_enable_event(c, "would write", h.preload, "entry", h.entry);
		} else {
			et_enable_say(c, "%s already names %s: unchanged\n", h.preload, h.entry);
			et_enable_event(c, "unchanged", h.preload, "entry", h.entry);
		}
		goto out;
	}
	bool made = false, changed = false;
	if ((rc = make_link(&h, &made, &changed)) != 0)
		goto out;
	if ((rc = trial(&h, trial_program())) != 0) {
		if (made) {
			char stop[PATH_MAX + 64];
			link_stop(&h, stop, sizeof stop);
			unlink(h.link);
			et_enable_remove_empty_parents(h.link, stop);
		}
		goto out;
	}
	if ((rc = et_tool_make_parents(h.list)) != 0 || (rc = et_tool_write_atomic(h.list, lt, ltlen, 0644)) != 0)
		goto out;
	et_enable_event(c, changed ? "link" : "unchanged", h.link, "target", h.lib);
	et_enable_say(c, "%s %s in %s\n", listed ? "already listed:" : "listed", strcmp(real, ET_HOSTWIDE_ALL) ? real :
	    ET_HOSTWIDE_ALL " (every program)", h.list);
	et_enable_event(c, "write", h.list, "program", listed ? "already listed" : "listed");
	if (entered) {
		et_enable_say(c, "%s already names %s\n", h.preload, h.entry);
		et_enable_event(c, "unchanged", h.preload, "entry", h.entry);
		goto out;
	}
	/* the backup first, then the loader's list */
	struct stat st;
	mode_t mode = had && stat(h.preload, &st) == 0 ? (st.st_mode & 07777) : 0644;
	if (had) {
		rc = et_tool_write_atomic(h.backup, cur, clen, mode);
		unlink(h.none);
	} else {
		static const char note[] = MARKER " there was no " ET_HOSTWIDE_PRELOAD " before\n";
		rc = et_tool_write_atomic(h.none, note, sizeof note - 1, 0644);
		unlink(h.backup);
	}
	if (!rc)
		rc = et_tool_write_atomic(h.preload, next, nlen, mode);
	if (rc) {
		/* the list as it was: nothing half-done */
		if (!listed && !l.exists) {
			unlink(h.list);
		} else if (!listed) {
			free(l.p[--l.n]);
			size_t plen;
			char *pt = list_text(&l, &plen);
			if (pt)
				et_tool_write_atomic(h.list, pt, plen, 0644);
			free(pt);
		}
		goto out;
	}
	et_enable_say(c, "kept %s as it was in %s\n", h.preload, had ? h.backup : h.none);
	et_enable_event(c, "keep", h.preload, "in", had ? h.backup : h.none);
	et_enable_say(c, "wrote %s: it names %s -> %s\n", h.preload, h.entry, h.lib);
	et_enable_event(c, "write", h.preload, "entry", h.entry);
	et_enable_say(c, "takes effect in each program started from now on\n");
out:
	free(lt);
	free(next);
	free(cur);
	list_free(&l);
	return rc;
}

/* ld.so.preload without the line (or word) entry: into a malloc'd copy. */
static char *preload_without(const char *buf, const char *entry, size_t *len)
{
	size_t n = strlen(buf), el = strlen(entry);
	char *out = malloc(n + 1);
	if (!out)
		return NULL;
	size_t o = 0;
	for (const char *p = buf; *p;) {
		size_t ll = strcspn(p, "\n");
		bool nl = p[ll] == '\n';
		if (ll == el && !strncmp(p, entry, el)) {
			p += ll + nl;
			continue;
		}
		memcpy(out + o, p, ll + nl);
		o += ll + nl;
		p += ll + nl;
	}
	out[o] = '\0';
	*len = o;
	return out;
}

/* The last program out: /etc/ld.so.preload as it was before enable (the
 * backup put back byte for byte, or the file removed where there was
 * none, or only the entry's line taken out where it changed since), and
 * the list, the backup and the link removed. */
static int last_one_out(struct ctx *c, struct hw *h)
{
	int rc = 0;
	char *cur = NULL, *orig = NULL;
	size_t clen = 0, olen = 0;
	int e = et_tool_slurp(h->preload, &cur, &clen);
	bool had_cur = e == 0;
	int eo = et_tool_slurp(h->backup, &orig, &olen);
	bool had_orig = eo == 0;
	bool noted = access(h->none, F_OK) == 0;
	char entry[PATH_MAX + 64] = "";
	if (!(had_cur && et_tool_preload_entry(cur, entry, sizeof entry))) {
		if (!et_tool_library(c->lib_opt, h->lib, sizeof h->lib)) {
			hw_entry_for(c, h);
			snprintf(entry, sizeof entry, "%s", h->entry);
			snprintf(c->lib, sizeof c->lib, "%s", h->lib);
		}
	}
	snprintf(c->entry, sizeof c->entry, "%s", entry);
	snprintf(h->entry, sizeof h->entry, "%s", entry);
	snprintf(h->link, sizeof h->link, "%s%s", c->root, entry);
	/* what enable wrote: the backup and the entry's line */
	char *expect = NULL;
	size_t elen = 0;
	if (had_orig || noted) {
		if (asprintf(&expect, "%s%s%s\n", had_orig ? orig : "",
		             (had_orig && olen && orig[olen - 1] != '\n') ? "\n" : "", entry) >= 0)
			elen = strlen(expect);
	}
	bool as_written = had_cur && expect && elen == clen && !memcmp(expect, cur, clen);
	struct stat st;
	mode_t mode = had_orig && stat(h->backup, &st) == 0 ? (st.st_mode & 07777) : 0644;
	if (c->dry) {
		if (as_written && had_orig) {
			et_enable_say(c, "would put back %s from %s (byte for byte)\n", h->preload, h->backup);
			et_enable_event(c, "would put back", h->preload, "from", h->backup);
		} else if (as_written) {
			et_enable_say(c, "would remove %s (there was none before)\n", h->preload);
			et_enable_event(c, "would remove", h->preload, NULL, NULL);
		} else if (had_cur && entry[0] && preload_has(cur, entry)) {
			et_enable_say(c, "would remove the line %s from %s (changed since enable: the rest kept)\n", entry, h->preload);
			et_enable_event(c, "would remove the line", h->preload, "entry", entry);
		}
		et_enable_say(c, "would remove %s, %s%s\n", h->list, had_orig ? h->backup : h->none, entry[0] ? " and the link" : "");
		et_enable_event(c, "would remove", h->list, NULL, NULL);
		et_enable_event(c, "would remove", had_orig ? h->backup : h->none, NULL, NULL);
		if (entry[0])
			et_enable_event(c, "would remove", h->link, NULL, NULL);
		goto out;
	}
	if (as_written && had_orig) {
		if ((rc = et_tool_write_atomic(h->preload, orig, olen, mode)) != 0)
			goto out;
		et_enable_say(c, "put back %s as it was before (from %s)\n", h->preload, h->backup);
		et_enable_event(c, "put back", h->preload, "from", h->backup);
	} else if (as_written) {
		if (unlink(h->preload) != 0) {
			et_tool_err("%s: cannot remove: %s", h->preload, strerror(errno));
			rc = ET_EXIT_BAD;
			goto out;
		}
		et_tool_sync_dir(h->preload);
		et_enable_say(c, "removed %s (there was none before)\n", h->preload);
		et_enable_event(c, "remove", h->preload, NULL, NULL);
	} else if (had_cur && entry[0] && preload_has(cur, entry)) {
		size_t nlen;
		char *n = preload_without(cur, entry, &nlen);
		if (!n || (rc = et_tool_write_atomic(h->preload, n, nlen, stat(h->preload, &st) == 0 ? st.st_mode & 07777 : 0644))) {
			free(n);
			rc = ET_EXIT_BAD;
			goto out;
		}
		free(n);
		et_enable_say(c, "removed the line %s from %s (it changed since enable: the rest kept as it is)\n", entry,
		    h->preload);
		et_enable_event(c, "remove the line", h->preload, "entry", entry);
	} else {
		et_enable_say(c, "%s does not name the library: left as it is\n", h->preload);
		et_enable_event(c, "unchanged", h->preload, NULL, NULL);
	}
	unlink(h->list);
	if (unlink(h->backup) == 0) {
		et_enable_say(c, "removed %s\n", h->backup);
		et_enable_event(c, "remove", h->backup, NULL, NULL);
	}
	if (unlink(h->none) == 0) {
		et_enable_say(c, "removed %s\n", h->none);
		et_enable_event(c, "remove", h->none, NULL, NULL);
	}
	et_enable_say(c, "removed %s\n", h->list);
	et_enable_event(c, "remove", h->list, NULL, NULL);
	char etc_en[PATH_MAX];
	et_enable_rooted(c, etc_en, sizeof etc_en, "/etc/enormoustext");
	rmdir(etc_en);
	if (entry[0]) {
		char cur_l[PATH_MAX];
		if (readlink(h->link, cur_l, sizeof cur_l) > 0 && unlink(h->link) == 0) {
			char stop[PATH_MAX + 64];
			link_stop(h, stop, sizeof stop);
			et_enable_say(c, "removed the link %s\n", h->link);
			et_enable_event(c, "remove", h->link, NULL, NULL);
			et_enable_remove_empty_parents(h->link, stop);
		}
	}
out:
	free(expect);
	free(cur);
	free(orig);
	return rc;
}

int et_disable_binary(struct ctx *c, const char *path)
{
	struct hw h;
	hw_paths(c, &h);
	struct list l;
	if (list_read(&h, &l))
		return ET_EXIT_BAD;
	const char *what = c->all ? "--all" : "--binary ";
	if (c->all)
		path = "";
	if (!l.exists) {
		et_tool_err("%s%s: %s does not exist: no program is enabled", what, path, h.list);
		return ET_EXIT_BAD;
	}
	char real[PATH_MAX];
	if (c->all)
		snprintf(real, sizeof real, "%s", ET_HOSTWIDE_ALL);
	else if (!realpath(path, real))
		snprintf(real, sizeof real, "%s", path);
	if (!c->all)
		snprintf(c->binary, sizeof c->binary, "%s", real);
	size_t k = 0;
	bool found = false;
	for (size_t i = 0; i < l.n; i++) {
		if (!strcmp(l.p[i], real) || !strcmp(l.p[i], path)) {
			found = true;
			free(l.p[i]);
		} else {
			l.p[k++] = l.p[i];
		}
	}
	l.n = k;
	if (!found) {
		if (c->all)
			et_tool_err("--all: not enabled (%s has no '" ET_HOSTWIDE_ALL "' line)", h.list);
		else
			et_tool_err("--binary %s: not in %s", path, h.list);
		list_free(&l);
		return ET_EXIT_BAD;
	}
	int rc = 0;
	if (l.n > 0) {
		size_t len;
		char *t = list_text(&l, &len);
		c->programs_left = (long)l.n;
		if (c->dry) {
			et_enable_say(c, "would write %s:\n%s", h.list, t ? t : "");
			et_enable_event(c, "would write", h.list, NULL, NULL);
		} else if (!t || (rc = et_tool_write_atomic(h.list, t, len, 0644)) == 0) {
			et_enable_say(c, "removed %s from %s (%zu program%s left)\n", c->all ? ET_HOSTWIDE_ALL " (every program)" : real,
			    h.list, l.n, et_tool_s(l.n));
			et_enable_event(c, "write", h.list, NULL, NULL);
		}
		free(t);
		list_free(&l);
		return rc;
	}
	list_free(&l);
	c->programs_left = 0;

	return last_one_out(c, &h);
}


/* -------------------------------------------------------------- --all */

/* The settings file enable --all writes (core/hostconf.h's form). */
static char *conf_text(const struct ctx *c, size_t *len)
{
	char *t = NULL;
	FILE *f = open_memstream(&t, len);
	if (!f)
		return NULL;
	fprintf(f, MARKER " the host's settings for every program (enormoustext %s, 'enable --all')\n"
	           "# NAME=VALUE a line: the library's variables (a process's own environment\n"
	           "# wins), " ET_HOSTCONF_PROGRAMS "= and " ET_HOSTCONF_EXCLUDE "= (colon-separated globs on a\n"
	           "# program's path or name); 'enormoustext disable --all' removes this file\n",
	        ENORMOUSTEXT_VERSION_STRING);
	if (c->programs)
		fprintf(f, ET_HOSTCONF_PROGRAMS "=%s\n", c->programs);
	if (c->exclude)
		fprintf(f, ET_HOSTCONF_EXCLUDE "=%s\n", c->exclude);
	size_t nt;
	const struct et_option_desc *tb = et_option_table(&nt);
	for (size_t i = 0; i < nt && i < ET_OPT__COUNT; i++)
		if (c->env[i])
			fprintf(f, "%s=%s\n", tb[i].name, c->env[i]);
	fclose(f);
	return t;
}

/* A program built with gcc's -fsanitize=address (its shared runtime)
 * stops at start when any library is loaded before that runtime, and
 * /etc/ld.so.preload loads this one first in every program
 * (docs/hosts.md). */
const char et_enable_asan_note[] =
	"programs built with gcc's -fsanitize=address (the shared libasan) stop at start\n"
	"  while any library is preloaded ('ASan runtime does not come first'), and\n"
	"  /etc/ld.so.preload now loads this one into every program (excluded ones too):\n"
	"  run them with ASAN_OPTIONS=verify_asan_link_order=0 (this command does not set\n"
	"  it for you); clang's -fsanitize=address and the other sanitizers are not\n"
	"  affected";

/* Does the host-wide list hold ET_HOSTWIDE_ALL (enable --all --preload)? */
static bool all_listed(const struct ctx *c)
{
	struct hw h;
	hw_paths(c, &h);
	struct list l;
	bool found = false;
	if (list_read(&h, &l) == 0) {
		for (size_t i = 0; i < l.n; i++)
			found |= !strcmp(l.p[i], ET_HOSTWIDE_ALL);
		list_free(&l);
	}
	return found;
}

/* What every preloaded process pays (bench/startup-cost --hostwide). */
static const char preload_cost[] =
	"every dynamically linked program now loads the library, for the copies the\n"
	"  daemon cannot give (PIE executables, JIT code): about 1.1x the start-up of\n"
	"  /bin/true on the project's test machine, an empty preloaded library 1.08x";

/* --preload's part: the entry for every program, or (without --preload)
 * the entry an earlier --preload made taken out. */
static int preload_part(struct ctx *c)
{
	if (c->preload)
		return enable_entry(c, ET_HOSTWIDE_ALL);
	if (!all_listed(c))
		return 0;
	if (c->dry) {
		et_enable_say(c, "would take '" ET_HOSTWIDE_ALL "' (every program, from --preload) out of %s\n",
		              ET_HOSTWIDE_LIST);
		return 0;
	}
	return et_disable_binary(c, "");
}

int et_enable_all(struct ctx *c)
{
	char conf[PATH_MAX];
	et_enable_rooted(c, conf, sizeof conf, ET_HOSTWIDE_CONF);
	snprintf(c->binary, sizeof c->binary, "%s", "");
	char *old = NULL;
	size_t olen = 0;
	int e = et_tool_slurp(conf, &old, &olen);
	if (e && e != -ENOENT) {
		et_tool_err("%s: %s: not changed", conf, e == -EINVAL ? "not a regular file" : strerror(-e));
		return ET_EXIT_BAD;
	}
	if (e == 0 && !et_enable_has_marker(old)) {
		et_tool_err("%s exists and was not written by 'enormoustext enable' (no '%s' first line): not changed",
		            conf, MARKER);
		free(old);
		return ET_EXIT_BAD;
	}
	/* the library checked before the settings are written (enable_entry
	 * checks it again, after them): a refusal leaves nothing behind */
	char lib[PATH_MAX + 8];
	if (check_etc_dir(c) ||
	    (c->preload && (et_tool_library(c->lib_opt, lib, sizeof lib) || et_enable_check_lib(lib)))) {
		free(old);
		return ET_EXIT_BAD;
	}
	size_t tlen = 0;
	char *text = conf_text(c, &tlen);
	if (!text) {
		free(old);
		et_tool_err("out of memory");
		return ET_EXIT_BAD;
	}
	int rc = 0;
	if (c->dry) {
		et_enable_say(c, "would write %s:\n%s", conf, text);
		et_enable_event(c, "would write", conf, NULL, NULL);
		rc = et_enable_daemon(c);
		if (rc == 0)
			rc = preload_part(c);
	} else if (old && olen == tlen && !memcmp(old, text, tlen)) {
		/* the same again: nothing written (a second run changes nothing) */
		et_enable_event(c, "keep", conf, NULL, NULL);
		rc = et_enable_daemon(c);
		if (rc == 0)
			rc = preload_part(c);
	} else if ((rc = et_tool_make_parents(conf)) == 0 && (rc = et_tool_write_atomic(conf, text, tlen, 0644)) == 0) {
		et_enable_say(c, "wrote %s: the host's settings\n", conf);
		et_enable_event(c, "write", conf, NULL, NULL);
		rc = et_enable_daemon(c);
		if (rc == 0 && (rc = preload_part(c)) != 0) {
			bool did;
			(void)et_disable_daemon(c, &did);
		}
		if (rc) {
			/* the settings as they were: nothing half-done */
			if (old)
				et_tool_write_atomic(conf, old, olen, 0644);
			else
				unlink(conf);
		}
	}
	if (rc == 0 && c->preload) {
		et_enable_say(c, "note: %s\n", preload_cost);
		et_enable_say(c, "note: %s\n", et_enable_asan_note);
		c->asan_note = true;
	}
	free(text);
	free(old);
	return rc;
}

int et_disable_all(struct ctx *c)
{
	char conf[PATH_MAX];
	et_enable_rooted(c, conf, sizeof conf, ET_HOSTWIDE_CONF);
	char *old = NULL;
	size_t olen = 0;
	int e = et_tool_slurp(conf, &old, &olen);
	bool ours = e == 0 && et_enable_has_marker(old);
	free(old);
	bool listed = all_listed(c), did = false;
	char note[PATH_MAX];
	et_enable_rooted(c, note, sizeof note, ET_ENABLE_DAEMON_NOTE);
	if (!listed && !ours && access(note, F_OK) != 0) {
		et_tool_err("--all: not enabled (no %s, no '" ET_HOSTWIDE_ALL "' line in %s)", conf, ET_HOSTWIDE_LIST);
		return ET_EXIT_BAD;
	}
	int rc = listed ? et_disable_binary(c, "") : 0;
	if (rc == 0)
		rc = et_disable_daemon(c, &did);
	if (rc)
		return rc;
	if (e == 0 && !ours) {
		et_enable_warn(c, "%s was not written by 'enormoustext enable': left as it is", conf);
	} else if (ours) {
		if (et_enable_remove_file(c, conf))
			return ET_EXIT_BAD;
	}
	if (!c->dry) {
		char etc_en[PATH_MAX];
		et_enable_rooted(c, etc_en, sizeof etc_en, ET_HOSTWIDE_ETC);
		rmdir(etc_en);
	}
	return 0;
}


/* ------------------------------------------------------------- --list */

/* --list: the host-wide entry, the programs of the list and --all's
 * settings, as lines, or into j (NULL without --json); *any: whether
 * the list or the settings hold anything.  0, or ET_EXIT_BAD when the
 * list cannot be read. */
int et_enable_list_hostwide(const struct ctx *c, struct et_json *j, bool *any)
{
	struct hw h;
	hw_paths(c, &h);
	char *cur = NULL, entry[PATH_MAX + 64] = "";
	size_t clen;
	if (et_tool_slurp(h.preload, &cur, &clen) == 0)
		(void)et_tool_preload_entry(cur, entry, sizeof entry);
	free(cur);
	struct list l;
	int rc = list_read(&h, &l);
	bool all = false;
	if (c->json) {
		if (entry[0])
			et_json_str(j, "preload_entry", entry);
		else
			et_json_null(j, "preload_entry");
		et_json_arr(j, "programs");
	} else if (entry[0]) {
		printf("%s names %s; %s lists:\n", h.preload, entry, h.list);
	} else if (l.n) {
		printf("%s does not name the library; %s lists:\n", h.preload, h.list);
	}
	for (size_t i = 0; i < l.n; i++) {
		if (!strcmp(l.p[i], ET_HOSTWIDE_ALL)) {
			all = true;
			if (!c->json)
				printf("  " ET_HOSTWIDE_ALL "  every program (enable --all)\n");
		} else if (c->json) {
			et_json_str(j, NULL, l.p[i]);
		} else {
			printf("  %s  (enable --binary)\n", l.p[i]);
		}
	}
	if (c->json) {
		et_json_arr_end(j);
		et_json_bool(j, "all", all);
	}
	char conf[PATH_MAX];
	et_enable_rooted(c, conf, sizeof conf, ET_HOSTWIDE_CONF);
	char *text = NULL;
	size_t tlen;
	bool have_conf = et_tool_slurp(conf, &text, &tlen) == 0 && et_enable_has_marker(text);
	if (c->json)
		et_json_obj(j, "settings");
	if (have_conf) {
		/* as the library reads it (core/hostconf.c) */
		struct et_hostconf hc;
		et_hostconf_parse(text, &hc);
		if (!c->json)
			printf("%s:\n", conf);
		size_t nt;
		const struct et_option_desc *t = et_option_table(&nt);
		for (int i = -2; i < (int)nt && i < ET_OPT__COUNT; i++) {
			const char *k = i == -2 ? ET_HOSTCONF_PROGRAMS : i == -1 ? ET_HOSTCONF_EXCLUDE : t[i].name;
			const char *v = i == -2 ? hc.programs : i == -1 ? hc.exclude : hc.val[i];
			if (!v)
				continue;
			if (c->json)
				et_json_str(j, k, v);
			else
				printf("  %s=%s\n", k, v);
		}
	}
	free(text);
	if (c->json)
		et_json_obj_end(j);
	*any = l.n || have_conf;
	list_free(&l);
	return rc;
}
