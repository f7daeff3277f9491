/*
 * tool.h — what the parts of the `enormoustext` command share: the
 * subcommands, error and usage reporting, a small JSON writer, and size
 * formatting.
 *
 * The command reuses the library's own modules (compiled into it, not
 * linked from libenormoustext.so): options.c for the option table and its
 * parsers, sysinfo.c for the sysfs readers and the `auto` backend order,
 * smaps.c for /proc/PID/smaps, plan.c for the window planner, util.c, and
 * outfile.c for every file it writes (output.c).  It never compiles init.c
 * or report.c, whose constructor would run in the
 * command itself.
 *
 * Exit statuses, for every subcommand: 0 done; 1 an input was bad (a PID, a
 * file, a write that failed) — one line on stderr names it and says what is
 * wrong; 2 a usage error (unknown option, missing or malformed argument).
 */
#ifndef ET_TOOL_H
#define ET_TOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "enormoustext.h"

#include "core/elfsyms.h"
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

/* The subcommand being run ("run", "stat", ...), for messages. */
extern const char *et_tool_cmd;

/* "enormoustext CMD: <message>\n" on stderr. */
void et_tool_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The same, then returns ET_EXIT_USAGE (the message should say what was
 * wrong; a hint to see --help is appended). */
int et_tool_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* For getopt_long's '?' and ':' returns: report the offending option. */
int et_tool_bad_option(int c, char **argv, int optind_now);

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

/* ------------------------------------------------------------- JSON */

/* A streaming JSON writer: values are written as they come, commas and
 * indentation are handled here.  Keys are given for members of objects and
 * NULL for elements of arrays (and the top-level value). */
struct et_json {
	FILE *f;
	int depth;
	bool need_comma[32];
	bool empty[32];
};

void et_json_init(struct et_json *j, FILE *f);
void et_json_obj(struct et_json *j, const char *key);
void et_json_obj_end(struct et_json *j);
void et_json_arr(struct et_json *j, const char *key);
void et_json_arr_end(struct et_json *j);
void et_json_str(struct et_json *j, const char *key, const char *val);   /* NULL: null */
void et_json_u64(struct et_json *j, const char *key, uint64_t v);
void et_json_i64(struct et_json *j, const char *key, int64_t v);
void et_json_bool(struct et_json *j, const char *key, bool v);
void et_json_null(struct et_json *j, const char *key);
/* Ends the document with a newline. */
void et_json_end(struct et_json *j);

/* ------------------------------------------------------------ formats */

/* Human-readable size: "0", "512B", "8K", "6.0M", "1.5G" (binary units). */
const char *et_tool_size(char *buf, size_t cap, uint64_t bytes);
/* Trim trailing whitespace (newlines of sysfs files) in place. */
char *et_tool_trim(char *s);
/* Read a small file into buf (NUL-terminated, trimmed); -errno on failure. */
long et_tool_read(const char *path, char *buf, size_t cap);
/* Parse a non-negative decimal integer that fills the whole string. */
int et_tool_parse_u64(const char *s, uint64_t *out);

/* ------------------------------------------------------------ output */

/* A file the command writes (-o, --png, --svg), by outfile.c's rules (see
 * internal.h): a regular file is written beside and renamed in, so a
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
/* Flush and put the file in place: 0, or -1 after one line naming it. */
int et_tool_out_close(struct et_tool_out *t);
/* Drop what was written: what is at the path stays as it was. */
void et_tool_out_abort(struct et_tool_out *t);
/* "enormoustext CMD: NAME: why" for a failed et_out_* call (o may be NULL:
 * err, an errno or -errno, alone). */
void et_tool_out_error(const char *name, const struct et_out *o, int err);

/* ---------------------------------------------------------------- run */

/* The LD_PRELOAD value with libenormoustext first: the library from lib_opt
 * (--lib), else $ENORMOUSTEXT_LIB, else this command's default; NULL after
 * one line saying why.  Free it. */
char *et_tool_preload(const char *lib_opt);

/* ------------------------------------------------------------- check */

struct et_check_opts {
	uint64_t pmd_size;        /* H: huge page size to plan for */
	uint64_t page_size;       /* run-time page size (granularity of load bases) */
	uint64_t pad_threshold;   /* tails larger than this are worth padding */
	bool json;
};

/* Analyse one ELF image held in memory (buf may be modified by libelf).
 * Writes the human-readable analysis to `out` (or one JSON value to `j`
 * when opts->json); on a bad or truncated file, writes nothing there and
 * one line naming `name` to `err`, and returns 1.  Returns 0 on success. */
int et_check_image(const char *name, void *buf, size_t len, const struct et_check_opts *opts,
                   FILE *out, struct et_json *j, FILE *err);
/* The same for a file on disk (read into private memory first). */
int et_check_path(const char *path, const struct et_check_opts *opts, FILE *out,
                  struct et_json *j, FILE *err);

#endif
