/*
 * preload.h — libenormoustext handed to another program (preload.c):
 * which file, the LD_PRELOAD value with it first, and its variables'
 * values checked by its own parser.  For `run`, `record` and `enable`.
 */
#ifndef ET_TOOL_PRELOAD_H
#define ET_TOOL_PRELOAD_H

#include "tool.h"

/* The library this command uses when none is named (the build tree's for
 * the command of a build tree, then beside the command, then LIBDIR), into
 * out; NULL when none is there, `tried` listing where it looked. */
const char *et_tool_default_library(char *out, size_t cap, char *tried, size_t tcap);
/* The linker script `name` (enormous.ld, enormous-32m.ld) as this command
 * finds it: the source tree's for the command of a build tree, else the one
 * installed with the command (BINDIR/../share/enormoustext), else in the
 * configured DATADIR; into out, or NULL when there is none. */
const char *et_tool_linker_script(const char *name, char *out, size_t cap);
/* The library from lib_opt (--lib), else $ENORMOUSTEXT_LIB, else the
 * default, checked (a regular ELF file) and made absolute into abs: 0, or
 * ET_EXIT_BAD after one line saying why. */
int et_tool_library(const char *lib_opt, char *abs, size_t cap);
/* The LD_PRELOAD value with that library first (an entry for the same file
 * dropped from the one in the environment); NULL after one line saying
 * why.  Free it. */
char *et_tool_preload(const char *lib_opt);
/* The index of variable `var` (ENORMOUSTEXT_...) in the library's option
 * table, or -1. */
int et_tool_option_index(const char *var);
/* Values of the table's variables (val[i] for the i-th; NULL: not given)
 * checked by the library's own parser: -1 when all are good, else the
 * index of the first bad one (*accepts: what it accepts). */
int et_tool_options_bad(const char *const val[ET_OPT__COUNT], const char **accepts);
/* Would these values, set for every program (enable --all), make a
 * process say something nobody asked it to, or leave files behind?  The
 * first such, in words naming the variables, into why; NULL when none.
 * As the library reads them: DEFER_RATE or HOT=auto with DEFER=0 (each
 * process would say it is ignored), a PROFILE that cannot be read as a
 * profile (each would say so), PERFMAP on (a /tmp/perf-PID.map per
 * process, left behind; a line where /tmp is read-only). */
const char *et_tool_options_speak(const char *const val[ET_OPT__COUNT], char *why, size_t cap);

/* The word of the loader's list buf (/etc/ld.so.preload's text) that is
 * `enable --binary`'s entry (a path in a directory ending in
 * core/hostwide.h's ET_HOSTWIDE_DIR; comments skipped), into out: false
 * when there is none. */
bool et_tool_preload_entry(const char *buf, char *out, size_t cap);

#endif
