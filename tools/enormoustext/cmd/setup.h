/*
 * setup.h — the two boot-time files of `enormoustext setup --persist`
 * (setup_persist.c), for setup.c, which parses the command line, makes
 * the running settings' writes and asks setup_persist.c for the files.
 */
#ifndef ET_TOOL_SETUP_H
#define ET_TOOL_SETUP_H

#include "tool.h"

#include <limits.h>

#define THP_DIR "/sys/kernel/mm/transparent_hugepage"
#define TMPFILES_REL "/etc/tmpfiles.d/enormoustext.conf"
#define SYSCTL_REL "/etc/sysctl.d/60-enormoustext.conf"
#define MARKER "# Written by enormoustext setup --persist; enormoustext setup --undo removes it."

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
void et_setup_conf_load(struct conf *c);
/* Set key to value in c (a new entry remembers `was`). */
void et_setup_conf_set(struct conf *c, const char *key, const char *value, const char *was);
/* What --persist writes into c->text: the marker and c's settings. */
void et_setup_conf_render(struct conf *c);
/* --persist: say (lines, or members of J's object when J is not NULL) and,
 * unless dry, write each of the nc files that it changes, and warn of
 * another file that systemd reads at boot and that sets the same.
 * ET_EXIT_OK, or ET_EXIT_BAD after one line. */
int et_setup_persist(struct conf *cs, size_t nc, bool dry, const char *root, bool real, struct et_json *J);
/* --undo: remove the files of cs that are ours (unless dry), say what they
 * set and print the commands that put back what they were before.  root:
 * the --root given ("/" for none): those commands name it too, or they
 * would change this system's settings. */
int et_setup_undo(struct conf *cs, size_t nc, bool dry, const char *root, bool real, struct et_json *J);

#endif
