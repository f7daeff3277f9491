/*
 * tool.h — what every part of the `enormoustext` command shares: the
 * subcommands, error and usage messages (msg.c), size formatting and small
 * reads (common.c), the files it writes (output.c), the Prometheus format
 * (prom.c), another program run and its output captured, a command name
 * found along PATH, a script's #! line (spawn.c).
 *
 * The command's shape (bpftool's and git's; tests/layout/command.sh checks
 * it on the object files): main.c dispatches; one file per subcommand
 * (run.c, stat.c, check.c, status.c, setup.c, perfmap.c, prime.c,
 * record.c, profile.c, collapse.c, enable.c), which calls shared files
 * only, never another subcommand's; shared files, each with its header and
 * one piece of knowledge:
 *   elffile.c    ELF files through libelf: open, header, segments,
 *                interpreter, the build-id (one reader, one key), DT_NEEDED,
 *                functions
 *   check_elf.c  `check`'s analysis of a file (also `status --explain`'s)
 *   loader.c     which libraries a program loads (its own loader asked)
 *   preload.c    which libenormoustext, LD_PRELOAD, its variables checked
 *   sofile.c     a shared object checked whole (enable, status)
 *   enable_units.c, enable_hostwide.c, enable_files.c  `enable`'s parts
 *                (enable.h): a unit's drop-in; the host-wide list,
 *                /etc/ld.so.preload's entry, the settings file; what both share
 *   host.c       the host's settings and probes, the order of `auto`
 *   explain.c    the sentences of `status --explain`
 *   pagecache.c  a file's text windows in the page cache, priming them
 *   profiles.c   profiles loaded, windows, merged
 *   heatmap.c    the SVG heat map of `profile show`
 *   attrib.c     samples to (build-id, granule) counts, written as a profile
 *   import.c     other tools' recordings (perf.data: perfdata.c, pprof:
 *                pprof.c, perf script text) into those counts
 *
 * The command is made of the library's core (the static library
 * enormoustext_core_static; it includes only core/ headers): options.c for
 * the option table and its parsers, sysinfo.c for the sysfs readers and
 * the `auto` backend order, smaps.c for /proc/PID/smaps, plan.c for the
 * window planner, json.c for every --json, profile.c for the profile
 * format (read and written), outfile.c for every file it writes
 * (output.c), util.c, mm_flags.h for the MAP_/MADV_ values older headers
 * lack.  The runtime (constructor, passes) never runs in the command.
 *
 * Exit statuses, for every subcommand: 0 done; 1 an input was bad (a PID, a
 * file, a write that failed) — one line on stderr names it and says what is
 * wrong; 2 a usage error (unknown option, missing or malformed argument).
 * `collapse` also exits 1 when a range it asked for stayed small.
 */
#ifndef ET_TOOL_H
#define ET_TOOL_H

#include <sys/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "enormoustext.h"

#include "core/elfsyms.h"
#include "core/json.h"
#include "core/log.h"
#include "core/options.h"
#include "core/outfile.h"
#include "core/plan.h"
#include "core/profile.h"
#include "core/smaps.h"
#include "core/sysinfo.h"
#include "core/util.h"

#define ET_EXIT_OK 0
#define ET_EXIT_BAD 1
#define ET_EXIT_USAGE 2

/* The subcommand being run ("run", "stat", ...), for messages (msg.c;
 * main.c sets it). */
extern const char *et_tool_cmd;

/* "enormoustext CMD: <message>\n" on stderr. */
void et_tool_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The same, then returns ET_EXIT_USAGE (the message should say what was
 * wrong; a hint to see --help is appended). */
int et_tool_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Subcommands: argv[0] is the subcommand's name. */
int et_cmd_run(int argc, char **argv);
int et_cmd_stat(int argc, char **argv);
int et_cmd_check(int argc, char **argv);
int et_cmd_status(int argc, char **argv);
int et_cmd_setup(int argc, char **argv);
int et_cmd_perfmap(int argc, char **argv);
int et_cmd_prime(int argc, char **argv);
int et_cmd_record(int argc, char **argv);
int et_cmd_profile(int argc, char **argv);
int et_cmd_collapse(int argc, char **argv);
int et_cmd_enable(int argc, char **argv);
int et_cmd_disable(int argc, char **argv);
int et_cmd_compare(int argc, char **argv);
int et_cmd_daemon(int argc, char **argv);
int et_cmd_oci_hook(int argc, char **argv);
int et_cmd_align(int argc, char **argv);
/* Their tables (opts.h): options, usage forms, help (each in its file). */
struct et_cmd_spec;
const struct et_cmd_spec *et_cmd_run_spec(void);
const struct et_cmd_spec *et_cmd_stat_spec(void);
const struct et_cmd_spec *et_cmd_check_spec(void);
const struct et_cmd_spec *et_cmd_status_spec(void);
const struct et_cmd_spec *et_cmd_setup_spec(void);
const struct et_cmd_spec *et_cmd_perfmap_spec(void);
const struct et_cmd_spec *et_cmd_prime_spec(void);
const struct et_cmd_spec *et_cmd_record_spec(void);
const struct et_cmd_spec *et_cmd_profile_spec(void);
const struct et_cmd_spec *et_cmd_collapse_spec(void);
const struct et_cmd_spec *et_cmd_enable_spec(void);
const struct et_cmd_spec *et_cmd_disable_spec(void);
const struct et_cmd_spec *et_cmd_compare_spec(void);
const struct et_cmd_spec *et_cmd_daemon_spec(void);
const struct et_cmd_spec *et_cmd_oci_hook_spec(void);
const struct et_cmd_spec *et_cmd_align_spec(void);

/* ------------------------------------------------------------- JSON */

/* The JSON writer is core/json.h's (the library's report uses the same
 * one); this starts it on a stdio stream, each piece written as it comes
 * (et_json_end flushes the stream). */
void et_json_init(struct et_json *j, FILE *f);
/* A sink (core/util.h) into a stdio stream: the JSON and profile writers
 * write through it; flushing it flushes the stream. */
void et_tool_sink_file(struct et_sink *s, FILE *f);

/* ------------------------------------------------------------ formats */

/* "s" for a count other than 1, for "%llu sample%s" (also "es" words:
 * et_tool_plural(n, "es")). */
static inline const char *et_tool_plural(uint64_t n, const char *s)
{
	return n == 1 ? "" : s;
}
#define et_tool_s(n) et_tool_plural((uint64_t)(n), "s")

/* Human-readable size: "0", "512B", "8K", "6.0M", "1.5G" (binary units). */
const char *et_tool_size(char *buf, size_t cap, uint64_t bytes);
/* Trim trailing whitespace (newlines of sysfs files) in place. */
char *et_tool_trim(char *s);
/* Read a small file into buf: et_read_file (core/util.c), then trimmed;
 * its length, or -errno. */
long et_tool_read(const char *path, char *buf, size_t cap);
/* The bracketed word of a sysfs choice file ("always [madvise] never"), or
 * its whole text when it has no brackets; its length, or -errno ("" in out). */
long et_tool_read_choice(const char *path, char *out, size_t cap);
/* The sizes N*1024 of the entries "hugepages-<N>kB" of dir (the hugetlb
 * pools, the mTHP sizes), ascending; how many (0 when dir cannot be read). */
size_t et_tool_size_dirs(const char *dir, uint64_t *sizes, size_t cap);
/* An array that grows by realloc: p (with *cap elements of elem bytes)
 * made to hold need, its capacity doubled from 64; the array (moved or
 * not), or NULL when out of memory (or the size overflows), p then kept
 * as it was and still the caller's. */
void *et_tool_grow(void *p, size_t *cap, size_t need, size_t elem);
/* files.c: small files read and written whole.  et_tool_slurp: a regular
 * file (no link followed) in a malloc'd, NUL-terminated buffer, 0 or
 * -errno; et_tool_read_fd: all of fd (at most max bytes, 0: no bound), the
 * same; et_tool_write_atomic: data written beside path, fsync'ed, renamed
 * in (mode for a new file), the directory fsync'ed: 0, or ET_EXIT_BAD after
 * one line naming path (what was there stays); et_tool_sync_dir: fsync of
 * the directory that holds path; et_tool_make_parents: mkdir -p of it
 * (0755): 0, or ET_EXIT_BAD after one line. */
int et_tool_slurp(const char *path, char **buf, size_t *len);
int et_tool_read_fd(int fd, char **buf, size_t *len, size_t max);
/* The same two, the text returned, or NULL on any failure. */
char *et_tool_slurp_text(const char *path);
char *et_tool_read_fd_text(int fd, size_t max);
int et_tool_write_atomic(const char *path, const char *data, size_t len, mode_t mode);
void et_tool_sync_dir(const char *path);
int et_tool_make_parents(const char *path);
/* Parse a non-negative decimal integer that fills the whole string. */
int et_tool_parse_u64(const char *s, uint64_t *out);
/* A process id: decimal digits only, 1..4194304 (PID_MAX_LIMIT); 0 or -1. */
int et_tool_parse_pid(const char *s, long *out);

/* Why /proc/PID/smaps of another process could not be read ("permission
 * denied"): a user is told to be root or the owner; root is told what
 * refused it, since being root was not enough. */
const char *et_tool_denied_why(void);
/* 1 when PROC/PID is a kernel thread (PF_KTHREAD in PROC/PID/stat: it has
 * no user memory, so no text of its own), else 0 (also when unknown). */
int et_tool_kthread(const char *proc, long pid);
/* THE rule for a kernel thread named where a process is wanted (stat,
 * collapse, perfmap, record --pid): when PROC/PID is one, say so on one
 * line ("PID 2 (kthreadd): a kernel thread: ...") and return 1; else 0. */
int et_tool_refuse_kthread(const char *proc, long pid);

/* ------------------------------------------------------------ output */

/* A file the command writes (-o, --svg), by outfile.c's rules (see
 * core/outfile.h): a regular file is written beside and renamed in, so a
 * failure leaves the old one whole; a device or FIFO is written as it is; a
 * link is followed; anything else is refused.  Messages name the path as
 * given, never a temporary. */
struct et_tool_out {
	struct et_out o;
	FILE *f;
	const char *name;
};
/* A stream into path, or NULL after one line naming path and why. */
FILE *et_tool_out_open(struct et_tool_out *t, const char *path);
/* The same with et_out_open's flags (ET_OUT_READABLE: a new file 0644). */
FILE *et_tool_out_open_flags(struct et_tool_out *t, const char *path, unsigned flags);
/* The same, except that a FIFO with no reader returns NULL with nothing
 * said (t->o.skipped set): a caller that opens early (record, before its
 * COMMAND runs) opens it again when it has something to write. */
FILE *et_tool_out_try(struct et_tool_out *t, const char *path);
/* Flush and put the file in place: 0, or -1 after one line naming it. */
int et_tool_out_close(struct et_tool_out *t);
/* Drop what was written: what is at the path stays as it was. */
void et_tool_out_abort(struct et_tool_out *t);
/* Whether path is this process's standard output (/dev/stdout, the file
 * or pipe stdout is): --json, which goes there, refuses to share it. */
bool et_tool_out_is_stdout(const char *path);
/* "enormoustext CMD: NAME: why" for a failed et_out_* call (o may be NULL:
 * err, an errno or -errno, alone). */
void et_tool_out_error(const char *name, const struct et_out *o, int err);

/* -------------------------------------------------------- Prometheus */

/* The text exposition format 0.0.4 (prom.c): a family's # HELP (escaped)
 * and # TYPE ("gauge", "counter") lines, then its samples, each NAME with
 * its labels (values escaped: backslash, double quote, newline) and an
 * integer value.  The caller writes each family's samples together. */
struct et_prom_label {
	const char *name, *value;
};
void et_prom_family(FILE *f, const char *name, const char *type, const char *help);
void et_prom_sample(FILE *f, const char *name, const struct et_prom_label *l, size_t n, uint64_t v);
/* Whether s is a valid metric name ([a-zA-Z_:][a-zA-Z0-9_:]*). */
bool et_prom_name_ok(const char *s);

/* ------------------------------------------------------------ spawn */

/* Run argv (no shell) with env (NULL: this process's), stdout into *out
 * (malloc'd, may be NULL), stderr into *err when err is given (else
 * inherited); the exit status, or -1 when it could not run or was killed
 * (spawn.c). */
int et_tool_capture(char *const argv[], char *const envp[], char **out, char **err);
/* The file execvp would run for name (spawn.c; `run` and `status
 * --explain` both): name itself when it has a slash, else the first
 * executable regular file name in a directory of $PATH ("/bin:/usr/bin"
 * when PATH is unset; an empty entry is the current directory).  0 with
 * it in out, or an errno: ENOENT (in no directory), EACCES (found, but
 * not executable), ENAMETOOLONG. */
int et_tool_which(const char *name, char *out, size_t cap);
/* A script's #! line, as the kernel and `env` read it (spawn.c). */
struct et_tool_script {
	char line[257];            /* the #! line (256 bytes at most; a CR at its end left out) */
	char interp[4096];         /* the interpreter it names: what the kernel runs */
	char program[4096];        /* what runs the script: interp, or env's PROGRAM found along PATH */
	char name[257];            /* env's PROGRAM as the line names it ("" without env) */
	bool via_env;              /* interp is env */
};
/* 1 when path starts with "#!" (sc filled), 0 when it does not, -errno
 * when it cannot be read or its line names nothing to run (-ENOEXEC), or
 * env's PROGRAM is not found (-ENOENT, -EACCES: sc->name says which). */
int et_tool_script(const char *path, struct et_tool_script *sc);

#endif
