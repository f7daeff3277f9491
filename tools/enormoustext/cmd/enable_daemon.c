/*
 * tools/enormoustext/cmd/enable_daemon.c — what `enable --all` does first
 * and `disable --all` undoes last: `enormoustext daemon` running on the
 * host, so that the page cache holds every program's text as huge folios
 * and the kernel maps it huge, with no code of ours in any process.
 *
 * The unit enormoustext.service is the packages' (found in systemd's unit
 * directories) or, for a build installed by hand that has none, written to
 * /etc/systemd/system from examples/systemd/enormoustext.service (made
 * into daemon_unit.h at build time) naming this command.  Where systemd
 * runs: `systemctl enable --now`; elsewhere (a container, a chroot, --root)
 * `systemctl --root=DIR enable`, which needs no running systemd, and a
 * line saying how to start the daemon now; with no systemctl at all, that
 * line alone.  What was done is kept in ET_ENABLE_DAEMON_NOTE so that
 * `disable --all` undoes that and no more (a unit the admin had enabled
 * stays enabled).
 *
 * Owns: the daemon's unit as enable writes it, its enablement, the note.
 * May call: enable_files.c, spawn.c (systemctl), host.c (the daemon's
 * state), msg.c, common.c.
 * Never: replaces or removes a unit file it did not write (no MARKER);
 * stops a daemon it cannot tell is this command's.
 */
#include "enable.h"
#include "host.h"

#include "core/util.h"

#include "daemon_unit.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define UNIT "enormoustext.service"

static const char *const unit_dirs[] = { "/etc/systemd/system", "/usr/local/lib/systemd/system",
	                                     "/usr/lib/systemd/system", "/lib/systemd/system" };

static bool systemd_running(void)
{
	/* sd_booted(3)'s test */
	struct stat st;
	return lstat("/run/systemd/system", &st) == 0 && S_ISDIR(st.st_mode);
}

/* The daemon's unit file under --root: found in a unit directory (0, path
 * set), or -1 with path the one enable would write. */
static int unit_find(const struct ctx *c, char *path, size_t cap)
{
	for (size_t i = 0; i < sizeof unit_dirs / sizeof *unit_dirs; i++) {
		char dir[PATH_MAX];
		snprintf(dir, sizeof dir, "%s/" UNIT, unit_dirs[i]);
		et_enable_rooted(c, path, cap, dir);
		struct stat st;
		if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
			return 0;
	}
	et_enable_rooted(c, path, cap, "/etc/systemd/system/" UNIT);
	return -1;
}

/* The unit as enable writes it: MARKER, then the example with this
 * command's own path in ExecStart=. */
static char *unit_text(size_t *len)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n <= 0)
		return NULL;
	self[n] = '\0';
	char *t = NULL;
	FILE *f = open_memstream(&t, len);
	if (!f)
		return NULL;
	fprintf(f, MARKER " the daemon's unit for a build with none installed (enormoustext %s);\n"
	           "# 'enormoustext disable --all' removes it\n", ENORMOUSTEXT_VERSION_STRING);
	static const char from[] = "/usr/local/bin/enormoustext";
	for (const char *p = et_daemon_unit_text; *p;) {
		const char *q = strstr(p, from);
		if (!q) {
			fputs(p, f);
			break;
		}
		fwrite(p, 1, (size_t)(q - p), f);
		fputs(self, f);
		p = q + sizeof from - 1;
	}
	fclose(f);
	return t;
}

/* systemctl ARGS... (--root=ROOT first when not live): its exit status,
 * -1 when it could not run; its stderr's first line into err. */
static int systemctl(const struct ctx *c, bool live, const char *a1, const char *a2, const char *a3, char *err,
                     size_t cap)
{
	char prog[PATH_MAX], rootarg[PATH_MAX + 16];
	if (et_tool_which("systemctl", prog, sizeof prog) != 0) {
		snprintf(err, cap, "no systemctl");
		return -1;
	}
	snprintf(rootarg, sizeof rootarg, "--root=%s", c->root[0] ? c->root : "/");
	char *argv[8];
	int n = 0;
	argv[n++] = prog;
	if (!live)
		argv[n++] = rootarg;
	argv[n++] = (char *)a1;
	if (a2)
		argv[n++] = (char *)a2;
	if (a3)
		argv[n++] = (char *)a3;
	argv[n] = NULL;
	char *e = NULL;
	int rc = et_tool_capture(argv, NULL, NULL, &e);
	snprintf(err, cap, "%s", e ? e : "");
	char *nl = strchr(err, '\n');
	if (nl)
		*nl = '\0';
	free(e);
	return rc;
}

struct note {
	bool exists, written, enabled_here;
	char unit[PATH_MAX];
};

static void note_read(const struct ctx *c, struct note *n)
{
	memset(n, 0, sizeof *n);
	char path[PATH_MAX];
	et_enable_rooted(c, path, sizeof path, ET_ENABLE_DAEMON_NOTE);
	char *t = NULL;
	size_t len;
	if (et_tool_slurp(path, &t, &len) != 0)
		return;
	n->exists = et_enable_has_marker(t);
	for (char *line = t; n->exists && line && *line;) {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		if (!strncmp(line, "unit=", 5))
			snprintf(n->unit, sizeof n->unit, "%s", line + 5);
		else if (!strcmp(line, "unit_written=yes"))
			n->written = true;
		else if (!strcmp(line, "enabled_here=yes"))
			n->enabled_here = true;
		line = nl ? nl + 1 : NULL;
	}
	free(t);
}

static int note_write(struct ctx *c, const struct note *n)
{
	char path[PATH_MAX], *t = NULL;
	size_t len;
	et_enable_rooted(c, path, sizeof path, ET_ENABLE_DAEMON_NOTE);
	FILE *f = open_memstream(&t, &len);
	if (!f)
		return ET_EXIT_BAD;
	fprintf(f, MARKER " enable --all runs the daemon (what was done, for 'disable --all')\n"
	           "unit=%s\nunit_written=%s\nenabled_here=%s\n",
	        n->unit, n->written ? "yes" : "no", n->enabled_here ? "yes" : "no");
	fclose(f);
	char *old = NULL;
	size_t olen = 0;
	if (et_tool_slurp(path, &old, &olen) == 0 && olen == len && !memcmp(old, t, len)) {
		free(old);
		free(t);
		return 0;
	}
	free(old);
	int rc = et_tool_make_parents(path) ? ET_EXIT_BAD : et_tool_write_atomic(path, t, len, 0644);
	free(t);
	if (rc == 0)
		et_enable_event(c, "write", path, NULL, NULL);
	return rc ? ET_EXIT_BAD : 0;
}

/* The unit written (when none was found) and enabled; *n says what was
 * done.  0, or ET_EXIT_BAD after one line (the unit enable wrote removed). */
static int unit_enable(struct ctx *c, struct note *n, bool live)
{
	char err[512];
	if (unit_find(c, n->unit, sizeof n->unit) != 0) {
		size_t len;
		char *t = unit_text(&len);
		if (!t || et_tool_make_parents(n->unit) || et_tool_write_atomic(n->unit, t, len, 0644)) {
			free(t);
			et_tool_err("%s: could not write the daemon's unit: not enabled", n->unit);
			return ET_EXIT_BAD;
		}
		free(t);
		n->written = true;
		et_enable_say(c, "wrote %s (no unit of the daemon was installed)\n", n->unit);
		et_enable_event(c, "write", n->unit, NULL, NULL);
		if (live)
			(void)systemctl(c, true, "daemon-reload", NULL, NULL, err, sizeof err);
	}
	int was = systemctl(c, live, "is-enabled", "--quiet", UNIT, err, sizeof err);
	if (was == -1 && !strcmp(err, "no systemctl"))
		return 0;
	if (was == 0 && !n->enabled_here) {
		et_enable_say(c, "%s was enabled already\n", UNIT);
	} else if (was != 0) {
		n->enabled_here = true;
	}
	int rc = live ? systemctl(c, true, "enable", "--now", UNIT, err, sizeof err) :
	                systemctl(c, false, "enable", UNIT, NULL, err, sizeof err);
	if (rc != 0) {
		et_tool_err("systemctl%s enable %s%s failed (%s): the daemon is not enabled", live ? "" : " --root",
		            live ? "--now " : "", UNIT, err[0] ? err : "no message");
		if (n->written) {
			unlink(n->unit);
			n->written = false;
		}
		return ET_EXIT_BAD;
	}
	return 0;
}

int et_enable_daemon(struct ctx *c)
{
	char self[PATH_MAX];
	ssize_t sl = readlink("/proc/self/exe", self, sizeof self - 1);
	self[sl > 0 ? sl : 0] = '\0';
	bool live = !c->root[0] && systemd_running();
	char prog[PATH_MAX];
	bool have_systemctl = et_tool_which("systemctl", prog, sizeof prog) == 0;
	struct note n;
	note_read(c, &n);
	if (c->dry) {
		char unit[PATH_MAX];
		bool found = unit_find(c, unit, sizeof unit) == 0;
		if (!found)
			et_enable_say(c, "would write %s (no unit of the daemon is installed)\n", unit);
		if (have_systemctl)
			et_enable_say(c, "would run systemctl %s%s enable %s%s\n", live ? "" : "--root=",
			              live ? "" : c->root[0] ? c->root : "/", live ? "--now " : "", UNIT);
		return 0;
	}
	if (unit_enable(c, &n, live))
		return ET_EXIT_BAD;
	if (note_write(c, &n)) {
		et_tool_err("%s: could not be written: the daemon is enabled, but 'disable --all' will not know it",
		            ET_ENABLE_DAEMON_NOTE);
		return ET_EXIT_BAD;
	}
	c->daemon = live ? "started" : have_systemctl ? "enabled for the next boot" : "not started: no systemd";
	if (live) {
		et_enable_say(c, "the daemon runs: systemctl enable --now %s done\n", UNIT);
		return 0;
	}
	struct et_tool_daemon d;
	et_tool_daemon_read(c->root[0] ? c->root : "/", &d);
	if (d.running) {
		et_enable_say(c, "the daemon runs already (pid %ld)\n", d.pid);
		c->daemon = "running";
	} else if (have_systemctl) {
		et_enable_say(c, "%s enabled%s; systemd is not running here: start the daemon now with\n"
		                 "  %s daemon &\n",
		              UNIT, c->root[0] ? " in --root's system" : " for the next boot", self);
	} else {
		et_enable_say(c, "no systemd here: start the daemon with this system's init (it runs in the\n"
		                 "foreground until SIGTERM):\n  %s daemon\n", self);
	}
	return 0;
}

/* A daemon started by hand (no systemd): stopped when its state file's pid
 * is still this command running 'daemon'. */
static void stop_by_hand(struct ctx *c)
{
	struct et_tool_daemon d;
	et_tool_daemon_read("/", &d);
	if (!d.running || d.pid <= 1)
		return;
	char p[64], cmd[256];
	snprintf(p, sizeof p, "/proc/%ld/cmdline", d.pid);
	long len = et_read_file(p, cmd, sizeof cmd - 1);   /* the NULs between the words kept */
	if (len <= 0)
		return;
	cmd[len] = '\0';
	const char *arg1 = cmd + strlen(cmd) + 1;
	if (arg1 >= cmd + len || strcmp(arg1, "daemon") != 0)
		return;
	if (kill((pid_t)d.pid, SIGTERM) == 0)
		et_enable_say(c, "stopped the daemon (pid %ld)\n", d.pid);
}

int et_disable_daemon(struct ctx *c, bool *did)
{
	struct note n;
	note_read(c, &n);
	*did = n.exists;
	if (!n.exists)
		return 0;
	bool live = !c->root[0] && systemd_running();
	char err[512];
	if (c->dry) {
		if (n.enabled_here)
			et_enable_say(c, "would run systemctl disable%s %s\n", live ? " --now" : "", UNIT);
		if (n.written)
			et_enable_say(c, "would remove %s\n", n.unit);
	} else {
		if (n.enabled_here) {
			int rc = live ? systemctl(c, true, "disable", "--now", UNIT, err, sizeof err) :
			                systemctl(c, false, "disable", UNIT, NULL, err, sizeof err);
			if (rc == 0)
				et_enable_say(c, "systemctl disable%s %s: done\n", live ? " --now" : "", UNIT);
			else if (rc > 0)
				et_enable_warn(c, "systemctl disable %s failed (%s): disable it by hand", UNIT, err);
		} else if (live) {
			et_enable_say(c, "%s left enabled (it was before 'enable --all')\n", UNIT);
		}
		if (!c->root[0] && !live)
			stop_by_hand(c);
	}
	if (n.written) {
		char *t = NULL;
		size_t len;
		if (et_tool_slurp(n.unit, &t, &len) == 0 && et_enable_has_marker(t) && et_enable_remove_file(c, n.unit)) {
			free(t);
			return ET_EXIT_BAD;
		}
		free(t);
		if (!c->dry) {
			char etc[PATH_MAX];
			et_enable_rooted(c, etc, sizeof etc, "/etc");
			et_enable_remove_empty_parents(n.unit, etc);
		}
		if (live && !c->dry)
			(void)systemctl(c, true, "daemon-reload", NULL, NULL, err, sizeof err);
	}
	char path[PATH_MAX];
	et_enable_rooted(c, path, sizeof path, ET_ENABLE_DAEMON_NOTE);
	return et_enable_remove_file(c, path);
}

void et_enable_list_daemon(const struct ctx *c, struct et_json *j, bool *any)
{
	struct note n;
	note_read(c, &n);
	if (j) {
		et_json_obj(j, "daemon");
		et_json_bool(j, "enabled", n.exists);
		et_json_str(j, "unit", n.exists ? n.unit : NULL);
		et_json_bool(j, "unit_written", n.written);
		et_json_bool(j, "enabled_here", n.enabled_here);
		et_json_obj_end(j);
	} else if (n.exists) {
		printf("the daemon: %s%s%s\n", n.unit, n.written ? " (written by enable)" : "",
		       n.enabled_here ? ", enabled by enable" : ", enabled before enable");
	}
	if (n.exists)
		*any = true;
}
