/*
 * tools/enormoustext/cmd/status.c — `enormoustext status` (options: the table
 * below; `--explain [PROGRAM]`): what this system
 * allows for huge text, and which backend `auto` picks; with --explain,
 * what to do about it.
 *
 * The settings and the probes are host.c's (read and run here, printed
 * here); the sentences of --explain are explain.c's.
 *
 * Owns: `status`: its options, and the settings and probes as text or
 * JSON.
 * May call: host.c (the facts, the probes, the order of `auto`), explain.c
 * (--explain), check_elf.c (a PROGRAM it cannot read, said first), opts.c
 * (its table), core (json), msg.c, common.c.
 * Never: changes a setting.
 */
#include "tool.h"
#include "opts.h"
#include "explain.h"
#include "host.h"
#include "check_elf.h"

#include "core/hostconf.h"
#include "core/hostwide.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *probe_word(int w)
{
	return w < 0 ? "not probed" : w ? "yes" : "no";
}

/* A number read from sysfs, "?" when it could not be read. */
static const char *num(char buf[24], long v)
{
	if (v < 0)
		return "?";
	snprintf(buf, 24, "%ld", v);
	return buf;
}

static void print_probe(const char *what, const struct probe *p)
{
	if (p->works < 0)
		printf("  %-16s %s\n", what, p->detail);
	else
		printf("  %-16s %s: %s\n", what, probe_word(p->works), p->detail);
}

static void print_text(const struct et_tool_host *s)
{
	char a[16], b[16], why[1024], chain[64];
	printf("transparent huge pages%s\n", s->thp_available ? "" : " (not available: no " THP_DIR ")");
	printf("  enabled          %s\n", s->enabled[0] ? s->enabled : "unknown");
	printf("  defrag           %s\n", s->defrag[0] ? s->defrag : "unknown");
	printf("  shmem_enabled    %s\n", s->shmem[0] ? s->shmem : "unknown");
	printf("  this process     %s\n", s->si.thp_disabled_process
	               ? "THP disabled (PR_SET_THP_DISABLE, inherited)" : "THP allowed");
	printf("  PMD size         %s%s\n", et_tool_size(a, sizeof a, s->si.pmd_size),
	       s->si.pmd_size_read ? "" : " (assumed: hpage_pmd_size unreadable)");
	printf("  mTHP sizes       ");
	if (!s->nmthp)
		printf("none listed");
	else
		printf("(anon/shmem)");
	for (size_t i = 0; i < s->nmthp; i++)
		printf(" %s %s/%s", et_tool_size(a, sizeof a, s->mthp[i].size),
		       s->mthp[i].enabled[0] ? s->mthp[i].enabled : "-",
		       s->mthp[i].shmem[0] ? s->mthp[i].shmem : "-");
	printf("\n  khugepaged       %s",
	       s->kh_running < 0 ? "" : s->kh_running ? "running; " : "not running; ");
	char n1[24], n2[24], n3[24], n4[24], n5[24], n6[24];
	printf("defrag %s, pages_to_scan %s, scan_sleep_millisecs %s, max_ptes_none %s; "
	       "%s pages collapsed in %s full scans\n", num(n1, s->kh_defrag), num(n2, s->kh_scan),
	       num(n3, s->kh_sleep), num(n4, s->kh_ptes_none), num(n5, s->kh_collapsed),
	       num(n6, s->kh_full));
	printf("hugetlb pool\n");
	if (!s->npools)
		printf("  (no %s)\n", HUGETLB_DIR);
	for (size_t i = 0; i < s->npools; i++)
		printf("  %-16s %s pages, %s free, %s reserved, %s surplus%s\n",
		       et_tool_size(a, sizeof a, s->pools[i].size), num(n1, s->pools[i].total),
		       num(n2, s->pools[i].free), num(n3, s->pools[i].resv), num(n4, s->pools[i].surplus),
		       s->pools[i].size == s->si.pmd_size ? "  (the PMD size: used by the hugetlb backend)" : "");
	printf("probes (in this process, now)\n");
	print_probe("thp fault", &s->thp);
	print_probe("MADV_COLLAPSE", &s->collapse);
	print_probe("file-backed text", &s->file.p);
	if (s->file.p.works >= 0 && !s->file.same_fs)
		printf("  %-16s (%s is not on the filesystem of this command: results there may differ)\n",
		       "", s->file.dir);
	et_tool_auto_chain(s, "none", chain, sizeof chain);
	et_tool_auto_reason(s, why, sizeof why);
	printf("backend auto would use: %s\n  %s\n", chain, why);
	if (s->file.p.works == 1)
		printf("  and text the kernel already maps huge from the file (FilePmdMapped) is left as it is\n");
	printf("host-wide\n");
	if (s->hw_off && s->hw_dir_untrusted)
		printf("  off switch       %s exists but is ignored: %s is %s\n", ET_HOSTWIDE_OFF, ET_HOSTWIDE_ETC,
		       s->hw_dir_untrusted);
	else if (s->hw_off)
		printf("  off switch       %s exists: the library does nothing in any process, however loaded "
		       "(remove it to turn it back on)\n", ET_HOSTWIDE_OFF);
	else
		printf("  off switch       off (%s does not exist)\n", ET_HOSTWIDE_OFF);
	if (s->hw_entry[0] && s->hw_all)
		printf("  %-16s names %s: the library acts in every program (enable --all)%s%s%.0ld%s%s\n",
		       ET_HOSTWIDE_PRELOAD, s->hw_entry, s->hw_settings[0] ? " by the settings below" : "",
		       s->hw_programs > 0 ? ", and in the " : "", s->hw_programs > 0 ? s->hw_programs : 0L,
		       s->hw_programs > 0 ? (s->hw_programs == 1 ? " program of " : " programs of ") : "",
		       s->hw_programs > 0 ? ET_HOSTWIDE_LIST " by name" : "");
	else if (s->hw_entry[0])
		printf("  %-16s names %s: the library acts in the %ld program%s of %s\n", ET_HOSTWIDE_PRELOAD,
		       s->hw_entry, s->hw_programs < 0 ? 0 : s->hw_programs, s->hw_programs == 1 ? "" : "s",
		       ET_HOSTWIDE_LIST);
	else
		printf("  %-16s does not load the library (enable --binary PATH or --all --preload would)\n",
		       ET_HOSTWIDE_PRELOAD);
	if (s->hw_conf)
		printf("  %-16s %s\n", "settings", s->hw_settings[0] ? s->hw_settings : "(none: the defaults)");
	if (s->hw_dir_untrusted)
		printf("  %-16s %s is %s: the library ignores the list, the settings and the off switch "
		       "(chown root:root; chmod go-w)\n", "IGNORED", ET_HOSTWIDE_ETC, s->hw_dir_untrusted);
	if (s->hw_list_untrusted)
		printf("  %-16s %s is %s: the library ignores it (no program acts host-wide)\n", "IGNORED",
		       ET_HOSTWIDE_LIST, s->hw_list_untrusted);
	if (s->hw_conf_untrusted)
		printf("  %-16s %s is %s: the library ignores it, and with it every program of --all "
		       "(the programs listed by name act with their environment alone)\n", "IGNORED",
		       ET_HOSTWIDE_CONF, s->hw_conf_untrusted);
	if (s->hw_conf_bad_line)
		printf("  %-16s %s line %d is no setting (NAME=VALUE of the library's variables, "
		       ET_HOSTCONF_PROGRAMS "=, " ET_HOSTCONF_EXCLUDE "=): ignored\n", "warning", ET_HOSTWIDE_CONF,
		       s->hw_conf_bad_line);
	if (s->hw_conf_refused_line)
		printf("  %-16s %s line %d sets a variable that is not the host's (REPORT, RECORD, TOP_ONLY): "
		       "ignored\n", "warning", ET_HOSTWIDE_CONF, s->hw_conf_refused_line);
	if (s->hw_conf_speaks[0])
		printf("  %-16s %s: %s (enable --all refuses it; processes say nothing of it unless the "
		       "settings ask for ENORMOUSTEXT_VERBOSE)\n", "warning", ET_HOSTWIDE_CONF, s->hw_conf_speaks);
	for (size_t i = 0; i < s->hw_nlibs; i++)
		printf("  %-16s %s names %s: %s\n", s->hw_libs[i].problem[0] ? "BROKEN" : "library",
		       ET_HOSTWIDE_PRELOAD, s->hw_libs[i].path,
		       s->hw_libs[i].problem[0] ? s->hw_libs[i].problem : "a whole shared object");
	if (s->dm.running) {
		printf("  %-16s running (pid %ld): %lu file%s known, %lu primed, %lu pending, %lu with nothing to "
		       "prime, %lu given up\n", "daemon", s->dm.pid, s->dm.files, s->dm.files == 1 ? "" : "s",
		       s->dm.primed, s->dm.pending, s->dm.nothing, s->dm.gave_up);
		for (size_t i = 0; i < s->dm.nwaiting; i++)
			printf("  %-16s %s%s%s%s%s%s\n", "pending", s->dm.waiting[i].path,
			       s->dm.waiting[i].held_by[0] ? ": its small pages mapped by " : "",
			       s->dm.waiting[i].held_by, s->dm.waiting[i].held_by[0] ? " (primed once they end)" : "",
			       s->dm.waiting[i].why[0] ? ": " : "", s->dm.waiting[i].why);
	} else if (s->hw_daemon_wanted)
		printf("  %-16s NOT RUNNING, though enable --all wants it: start it (systemctl start "
		       "enormoustext.service, or 'enormoustext daemon &' where systemd does not run)%s\n",
		       "daemon", s->dm.known ? "; its last state is in " ET_TOOL_DAEMON_STATE : "");
	else
		printf("  %-16s not running%s (enormoustext daemon: the page cache kept huge for every program)\n",
		       "daemon", s->dm.known ? " (its last state is in " ET_TOOL_DAEMON_STATE ")" : "");
	(void)b;
}

static void num_or_null(struct et_json *j, const char *key, long v)
{
	if (v < 0)
		et_json_null(j, key);
	else
		et_json_i64(j, key, v);
}

static void probe_json(struct et_json *j, const char *key, const struct probe *p)
{
	et_json_obj(j, key);
	if (p->works < 0)
		et_json_null(j, "works");
	else
		et_json_bool(j, "works", p->works);
	et_json_str(j, "detail", p->detail);
}

/* --explain SCRIPT: the script given and what runs it (the program
 * explained). */
struct script_info {
	const char *path;           /* as given (found along PATH when it had no slash) */
	struct et_tool_script sc;   /* its #! line */
	const char *program;        /* what is explained: the last of chain */
	/* what runs it: the interpreter (or env's PROGRAM), then that one's
	 * interpreter where it is a script too, ... */
	char chain[5][PATH_MAX];
	int n;
};

static int print_json(const struct et_tool_host *s, bool explain, const char *program,
                      const struct script_info *script)
{
	struct et_json j;
	char why[1024];
	et_json_init(&j, stdout);
	et_json_obj(&j, NULL);
	et_json_u64(&j, "pmd_size", s->si.pmd_size);
	et_json_obj(&j, "thp");
	et_json_bool(&j, "available", s->thp_available);
	et_json_str(&j, "enabled", s->enabled[0] ? s->enabled : NULL);
	et_json_str(&j, "defrag", s->defrag[0] ? s->defrag : NULL);
	et_json_str(&j, "shmem_enabled", s->shmem[0] ? s->shmem : NULL);
	et_json_bool(&j, "disabled_for_process", s->si.thp_disabled_process);
	et_json_obj_end(&j);
	et_json_arr(&j, "mthp");
	for (size_t i = 0; i < s->nmthp; i++) {
		et_json_obj(&j, NULL);
		et_json_u64(&j, "size", s->mthp[i].size);
		et_json_str(&j, "enabled", s->mthp[i].enabled[0] ? s->mthp[i].enabled : NULL);
		et_json_str(&j, "shmem_enabled", s->mthp[i].shmem[0] ? s->mthp[i].shmem : NULL);
		et_json_obj_end(&j);
	}
	et_json_arr_end(&j);
	et_json_obj(&j, "khugepaged");
	if (s->kh_running < 0)
		et_json_null(&j, "running");
	else
		et_json_bool(&j, "running", s->kh_running);
	num_or_null(&j, "defrag", s->kh_defrag);
	num_or_null(&j, "pages_to_scan", s->kh_scan);
	num_or_null(&j, "scan_sleep_millisecs", s->kh_sleep);
	num_or_null(&j, "alloc_sleep_millisecs", s->kh_alloc_sleep);
	num_or_null(&j, "max_ptes_none", s->kh_ptes_none);
	num_or_null(&j, "pages_collapsed", s->kh_collapsed);
	num_or_null(&j, "full_scans", s->kh_full);
	et_json_obj_end(&j);
	et_json_arr(&j, "hugetlb");
	for (size_t i = 0; i < s->npools; i++) {
		et_json_obj(&j, NULL);
		et_json_u64(&j, "size", s->pools[i].size);
		num_or_null(&j, "total", s->pools[i].total);
		num_or_null(&j, "free", s->pools[i].free);
		num_or_null(&j, "reserved", s->pools[i].resv);
		num_or_null(&j, "surplus", s->pools[i].surplus);
		et_json_obj_end(&j);
	}
	et_json_arr_end(&j);
	et_json_obj(&j, "probes");
	probe_json(&j, "thp_fault", &s->thp);
	et_json_obj_end(&j);
	probe_json(&j, "collapse", &s->collapse);
	et_json_obj_end(&j);
	probe_json(&j, "file", &s->file.p);
	if (s->file.fresh < 0)
		et_json_null(&j, "fresh_file_huge");
	else
		et_json_bool(&j, "fresh_file_huge", s->file.fresh);
	et_json_str(&j, "dir", s->file.dir[0] ? s->file.dir : NULL);
	et_json_str(&j, "filesystem", s->file.fs[0] ? s->file.fs : NULL);
	et_json_bool(&j, "same_filesystem_as_command", s->file.same_fs);
	et_json_obj_end(&j);
	et_json_obj_end(&j);
	et_json_obj(&j, "auto");
	et_json_arr(&j, "backends");
	for (int i = 0; i < s->nchain; i++)
		et_json_str(&j, NULL, et_backend_name(s->chain[i]));
	et_json_arr_end(&j);
	et_tool_auto_reason(s, why, sizeof why);
	et_json_str(&j, "reason", why);
	et_json_obj_end(&j);
	et_json_obj(&j, "hostwide");
	et_json_bool(&j, "off_switch", s->hw_off);
	et_json_str(&j, "preload_entry", s->hw_entry[0] ? s->hw_entry : NULL);
	if (s->hw_programs < 0)
		et_json_null(&j, "programs");
	else
		et_json_i64(&j, "programs", s->hw_programs);
	et_json_bool(&j, "all", s->hw_all);
	et_json_bool(&j, "off_switch_ignored", s->hw_off && s->hw_dir_untrusted);
	et_json_str(&j, "settings", s->hw_conf ? s->hw_settings : NULL);
	et_json_str(&j, "directory_untrusted", s->hw_dir_untrusted);
	et_json_str(&j, "list_untrusted", s->hw_list_untrusted);
	et_json_str(&j, "settings_untrusted", s->hw_conf_untrusted);
	if (s->hw_conf_bad_line)
		et_json_i64(&j, "settings_bad_line", s->hw_conf_bad_line);
	else
		et_json_null(&j, "settings_bad_line");
	if (s->hw_conf_refused_line)
		et_json_i64(&j, "settings_refused_line", s->hw_conf_refused_line);
	else
		et_json_null(&j, "settings_refused_line");
	et_json_str(&j, "settings_speak", s->hw_conf_speaks[0] ? s->hw_conf_speaks : NULL);
	et_json_arr(&j, "preload_libraries");
	for (size_t i = 0; i < s->hw_nlibs; i++) {
		et_json_obj_flat(&j, NULL);
		et_json_str(&j, "path", s->hw_libs[i].path);
		et_json_str(&j, "problem", s->hw_libs[i].problem[0] ? s->hw_libs[i].problem : NULL);
		et_json_obj_end(&j);
	}
	et_json_arr_end(&j);
	et_json_obj(&j, "daemon");
	et_json_bool(&j, "running", s->dm.running);
	et_json_bool(&j, "wanted", s->hw_daemon_wanted);
	if (s->dm.known)
		et_json_i64(&j, "pid", s->dm.pid);
	else
		et_json_null(&j, "pid");
	et_json_u64(&j, "files", s->dm.files);
	et_json_u64(&j, "primed", s->dm.primed);
	et_json_u64(&j, "pending", s->dm.pending);
	et_json_u64(&j, "nothing_to_prime", s->dm.nothing);
	et_json_u64(&j, "gave_up", s->dm.gave_up);
	et_json_arr(&j, "pending_files");
	for (size_t i = 0; i < s->dm.nwaiting; i++) {
		et_json_obj(&j, NULL);
		et_json_str(&j, "path", s->dm.waiting[i].path);
		et_json_str(&j, "held_by", s->dm.waiting[i].held_by);
		et_json_str(&j, "why", s->dm.waiting[i].why);
		et_json_obj_end(&j);
	}
	et_json_arr_end(&j);
	et_json_obj_end(&j);
	et_json_obj_end(&j);
	int rc = ET_EXIT_OK;
	if (explain) {
		if (script) {
			et_json_obj(&j, "script");
			et_json_str(&j, "path", script->path);
			et_json_str(&j, "line", script->sc.line);
			et_json_str(&j, "interpreter", script->sc.interp);
			et_json_str(&j, "program", script->program);
			et_json_arr(&j, "chain");
			for (int i = 0; i < script->n; i++)
				et_json_str(&j, NULL, script->chain[i]);
			et_json_arr_end(&j);
			et_json_obj_end(&j);
		} else {
			et_json_null(&j, "script");
		}
		rc = et_tool_explain(s, program, &j);
	}
	et_json_obj_end(&j);
	et_json_end(&j);
	return rc;
}

enum { O_JSON = 1, O_NO_PROBE, O_PROBE_DIR, O_ROOT, O_EXPLAIN };

static const struct et_opt options[] = {
	{ "json", 0, NULL, "JSON instead of text", O_JSON, 0, 0, 0, NULL, 0 },
	{ "no-probe", 0, NULL, "read the settings only; run no probe", O_NO_PROBE, 0, 0, 0, NULL, 0 },
	{ "probe-dir", 0, "DIR",
	  "where the file probe writes its (unnamed, temporary)\n"
	  "file of two huge pages; default: the first of\n"
	  "$TMPDIR, /var/tmp, /tmp on the filesystem of this\n"
	  "command",
	  O_PROBE_DIR, 0, 0, 0, NULL, ET_COMP_DIR },
	{ "root", 0, "DIR",
	  "read sysfs under DIR instead of / (a copy, or a test\n"
	  "tree); implies --no-probe: probes can only test the\n"
	  "running system",
	  O_ROOT, 0, 0, 0, NULL, ET_COMP_DIR },
	{ "explain", 0, NULL,
	  "instead of the settings, what to do on this host, in\n"
	  "sentences, each from one of the facts above (the THP\n"
	  "policy and defrag, the kernel, the probes, the\n"
	  "hugetlb pool, the file system's page cache, this\n"
	  "process's memory cgroup); with --json, the same as an\n"
	  "\"explain\" member.  With a PROGRAM (an ELF program or\n"
	  "library; without a slash, found along PATH as `run`\n"
	  "finds it; a script: what its #! line runs, said first,\n"
	  "and in JSON \"script\": path, line, interpreter,\n"
	  "program, chain): what would move for it and the\n"
	  "libraries it needs\n"
	  "(as its loader lists them; not what it opens later\n"
	  "with dlopen): text in whole huge-page windows (the\n"
	  "planner of `check`), which way in (zero-copy from the\n"
	  "page cache, as `prime` sees its state; else copies),\n"
	  "the memory it costs per process, and the start-up\n"
	  "time, from a copy rate measured here and now",
	  O_EXPLAIN, 0, 0, 0, NULL, 0 },
	{ NULL, 0, NULL, NULL, 0, 0, 0, 0, NULL, 0 },
};

static const struct et_cmd_spec spec = {
	.name = "status",
	.forms = { { NULL, "[PROGRAM]" } },
	.about =
	        "What this system allows for text on huge pages: the THP policy (enabled,\n"
	        "defrag, shmem_enabled, and whether THP is disabled for this process), the\n"
	        "PMD size, the mTHP sizes, khugepaged, the hugetlb pool per page size (total,\n"
	        "free, reserved, surplus); whether MADV_COLLAPSE works, whether the first\n"
	        "write to a MADV_HUGEPAGE region gets a huge page, and whether the kernel\n"
	        "maps file-backed text huge (all three probed in this process, in well under\n"
	        "a second); which backends `auto` would try, in order, and why; and what is\n"
	        "on host-wide (/etc/ld.so.preload's entry and its programs, the off switch\n"
	        "/etc/enormoustext/off), and whether each library /etc/ld.so.preload names is\n"
	        "a whole shared object of this host (its headers and segments within the file).\n"
	        "A PROGRAM goes with --explain.\n",
	.sections = { { NULL, options, NULL } },
	.tail = "Exit status: 0; 1 PROGRAM cannot be found or read, is not an ELF program\n"
	        "(nor a script run by one), --root or --probe-dir is not a directory, or a\n"
	        "library /etc/ld.so.preload names is not a whole shared object (missing, cut\n"
	        "short: one line each, after the report); 2 usage error.\n",
	.operand = ET_COMP_FILE,
};

const struct et_cmd_spec *et_cmd_status_spec(void)
{
	return &spec;
}

/* --explain PROGRAM found as `run` finds it (along PATH without a slash:
 * spawn.c's et_tool_which), into out: 0, or ET_EXIT_BAD after one line. */
static int find_program(const char *name, char *out, size_t cap)
{
	int e = et_tool_which(name, out, cap);
	if (e == 0)
		return 0;
	struct stat st;
	if (e == ENOENT && stat(name, &st) == 0)
		et_tool_err("--explain %s: not found along PATH (a PROGRAM without a slash is looked for "
		            "there, as `run` looks for it; the one here is ./%s)", name, name);
	else if (e == ENOENT)
		et_tool_err("--explain %s: not found along PATH", name);
	else
		et_tool_err("--explain %s: %s (looked for along PATH)", name, strerror(e));
	return ET_EXIT_BAD;
}

/* One line for a #! line that names nothing that can run (r: what
 * et_tool_script returned). */
static void script_error(const char *given, const struct et_tool_script *sc, int r)
{
	if (strchr(sc->name, '\r'))
		et_tool_err("--explain %s: its line '%s' ends in a carriage return (DOS line ends): env "
		            "looks for a program whose name ends in one, and there is none", given, sc->line);
	else if (r == -ENOEXEC)
		et_tool_err("--explain %s: a script whose line '%s' names no program to run", given, sc->line);
	else if (sc->via_env && (r == -ENOENT || r == -EACCES))
		et_tool_err("--explain %s: a script run by %s %s ('%s'): env finds no %s along PATH", given,
		            sc->interp, sc->name, sc->line, r == -ENOENT ? sc->name : "executable of that name");
	else
		et_tool_err("--explain %s: a script run by %s ('%s'): %s", given, sc->interp, sc->line,
		            strerror(-r));
}

/* --explain SCRIPT (a #! line): what runs it, which is what the library is
 * loaded into; an interpreter that is a script itself is followed, as the
 * kernel follows it (4 deep at most).  0 with si filled (si->program: the
 * file to explain); 1 when path is no script (or cannot be read: the
 * checks after say so); -1 after one line when the line names nothing that
 * runs. */
static int script_program(const char *path, struct script_info *si)
{
	static struct et_tool_script next;
	memset(si, 0, sizeof *si);
	si->path = path;
	int r = et_tool_script(path, &si->sc);
	if (r == 0 || (r < 0 && !si->sc.line[0]))
		return 1;
	if (r < 0) {
		script_error(path, &si->sc, r);
		return -1;
	}
	snprintf(si->chain[0], sizeof si->chain[0], "%s", si->sc.program);
	for (si->n = 1;; si->n++) {
		const char *prog = si->chain[si->n - 1];
		struct stat st;
		if (stat(prog, &st) != 0) {
			const char *line = si->n == 1 ? si->sc.line : next.line;
			if (strchr(prog, '\r'))
				et_tool_err("--explain %s: its line '%s' ends in a carriage return (DOS line ends): "
				            "the kernel looks for a program whose name ends in one, and there is "
				            "none", path, line);
			else
				et_tool_err("--explain %s: a script run by %s ('%s'): %s", path, prog, line,
				            strerror(errno));
			return -1;
		}
		int q = et_tool_script(prog, &next);
		if (q == 0 || (q < 0 && !next.line[0]))
			break;
		if (si->n == 5) {
			et_tool_err("--explain %s: a script whose interpreters are scripts more than 4 deep "
			            "(the kernel runs no such chain)", path);
			return -1;
		}
		if (q < 0) {
			script_error(path, &next, q);
			return -1;
		}
		snprintf(si->chain[si->n], sizeof si->chain[si->n], "%s", next.program);
	}
	si->program = si->chain[si->n - 1];
	return 0;
}

/* --explain PROGRAM: a file `check` cannot read is said first, as this
 * command's error (not after the host's sentences, not as `check`'s), in
 * the words the analysis gave with its code: true after one line naming it
 * and why. */
static bool explain_refuses(const char *program)
{
	struct et_check_opts co = { .pmd_size = 0x200000, .page_size = 4096 };
	struct et_check_summary cs;
	struct et_check_failure f;
	if (et_check_summary(program, &co, &cs, &f) == 0)
		return false;
	et_tool_err("--explain %s: %s (PROGRAM is an ELF program or library)", program,
	            f.words[0] ? f.words : et_check_reason(f.why)->sentence);
	return true;
}

/* A library /etc/ld.so.preload names that is not whole (host.c, by
 * sofile.c): one line each, and status 1 after the report. */
static int preload_broken(const struct et_tool_host *s)
{
	for (size_t i = 0; i < s->hw_nlibs; i++)
		if (s->hw_libs[i].problem[0])
			et_tool_err("%s names %s: %s (every dynamically linked program loads it: see "
			            "docs/hosts.md, a broken library file)", ET_HOSTWIDE_PRELOAD, s->hw_libs[i].path,
			            s->hw_libs[i].problem);
	return s->hw_broken ? ET_EXIT_BAD : ET_EXIT_OK;
}

/* The report's own status where it failed, else the libraries'. */
static int explain_or(int report_rc, int libs_rc)
{
	return report_rc ? report_rc : libs_rc;
}

int et_cmd_status(int argc, char **argv)
{
	bool json = false, probe = true, explain = false;
	const char *program = NULL;
	const char *probe_dir = NULL;
	static struct et_tool_host s;
	memset(&s, 0, sizeof s);
	s.root = "/";
	struct et_args a;
	et_args_init(&a, &spec, argc, argv);
	int c;
	while ((c = et_args_next(&a)) > 0) {
		switch (c) {
		case O_JSON: json = true; break;
		case O_NO_PROBE: probe = false; break;
		case O_PROBE_DIR: probe_dir = a.val; break;
		case O_ROOT: s.root = a.val; break;
		case O_EXPLAIN: explain = true; break;
		}
	}
	if (c < 0)
		return et_args_exit(c);
	int next = 0;
	if (explain && a.nops)
		program = a.ops[next++];
	if (next < a.nops)
		return et_tool_usage("unexpected argument '%s'%s", a.ops[next],
		                     explain ? "" : " (a PROGRAM goes with --explain)");
	char found[PATH_MAX];
	static struct script_info si;
	const struct script_info *script = NULL;
	if (program) {
		if (find_program(program, found, sizeof found) != 0)
			return ET_EXIT_BAD;
		program = found;
	}
	struct stat st;
	if (program && stat(program, &st) != 0) {
		et_tool_err("%s: %s", program, strerror(errno));
		return ET_EXIT_BAD;
	}
	if (program && !S_ISREG(st.st_mode)) {
		et_tool_err("%s: not a regular file", program);
		return ET_EXIT_BAD;
	}
	if (program) {
		int r = script_program(program, &si);
		if (r < 0)
			return ET_EXIT_BAD;
		if (r == 0) {
			script = &si;
			program = si.program;
		}
	}
	if (program && explain_refuses(program))
		return ET_EXIT_BAD;
	if (stat(s.root, &st) != 0 || !S_ISDIR(st.st_mode)) {
		et_tool_err("--root %s: not a directory", s.root);
		return ET_EXIT_BAD;
	}
	if (probe_dir && (stat(probe_dir, &st) != 0 || !S_ISDIR(st.st_mode))) {
		et_tool_err("--probe-dir %s: not a directory", probe_dir);
		return ET_EXIT_BAD;
	}
	et_tool_host_read(&s, probe, probe_dir, program);
	int rc = preload_broken(&s);
	if (json)
		return explain_or(print_json(&s, explain, program, script), rc);
	if (script) {
		/* "S is a script run by P (its line '#!/usr/bin/env p': env finds
		 * p along PATH), itself a script run by Q: what follows is for Q" */
		printf("%s is a script run by %s", script->path, script->chain[0]);
		if (script->sc.via_env)
			printf(" (its line '%s': env finds %s along PATH)", script->sc.line, script->sc.name);
		for (int i = 1; i < script->n; i++)
			printf(", itself a script run by %s", script->chain[i]);
		printf(": what follows is for %s, which the library is loaded into when the script "
		       "runs\n\n", script->program);
	}
	if (explain)
		return explain_or(et_tool_explain(&s, program, NULL), rc);
	print_text(&s);
	return rc;
}
