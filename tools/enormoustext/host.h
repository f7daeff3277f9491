/*
 * host.h — what this system allows for huge text (host.c): its settings,
 * read from sysfs, and what three probes find in this process; the order
 * `auto` would try.  status.c prints it, explain.c turns it into advice
 * (`status --explain`).
 */
#ifndef ET_TOOL_HOST_H
#define ET_TOOL_HOST_H

#include "tool.h"
#include "core/memcg.h"

#include "core/mm_flags.h"

#include <limits.h>

#define THP_DIR "/sys/kernel/mm/transparent_hugepage"
#define HUGETLB_DIR "/sys/kernel/mm/hugepages"
#define ET_TOOL_HW_LIBS 16         /* the libraries of /etc/ld.so.preload checked */

struct probe {
	int works;             /* -1 not run, 0 no, 1 yes */
	char detail[320];
};

struct file_probe {
	struct probe p;
	int fresh;             /* -1 not run, 0/1: freshly written file mapped huge */
	char dir[PATH_MAX];
	char fs[32];
	bool same_fs;
};

struct size_entry {
	uint64_t size;
	char enabled[32], shmem[32];    /* mTHP: anonymous and shmem policy */
	long total, free, resv, surplus; /* hugetlb */
};

/* `enormoustext daemon` (cmd/daemon.c), from ROOT/ET_TOOL_DAEMON_STATE/daemon.json:
 * there (known), its pid, whether that process runs and is the command
 * (only for the real root), its files by state. */
struct et_tool_daemon {
	bool known, running;
	long pid;
	unsigned long files, primed, pending, nothing, gave_up;
	/* the first pending files, and the processes that map their small
	 * pages (as the daemon last found them; "" where it named none) */
	struct {
		char path[256], held_by[160], why[64];
	} waiting[8];
	size_t nwaiting;
};
/* Read it: root "/" the real system (running checked), else a copy. */
void et_tool_daemon_read(const char *root, struct et_tool_daemon *d);

struct et_tool_host {
	const char *root;
	bool real;
	struct et_sysinfo si;
	bool thp_available;
	char enabled[64], defrag[64], shmem[64];
	long kh_defrag, kh_scan, kh_sleep, kh_alloc_sleep, kh_ptes_none, kh_collapsed, kh_full;
	int kh_running;                  /* -1 unknown */
	struct size_entry mthp[32], pools[8];
	size_t nmthp, npools;
	struct probe thp, collapse;
	struct file_probe file;
	enum et_backend chain[4];
	int nchain;
	const char *why;
	/* for --explain */
	char kernel[64];                 /* uname -r (ROOT/proc/sys/kernel/osrelease under --root) */
	int kmajor, kminor;              /* -1 unknown */
	uint64_t mem_total;              /* MemTotal, 0 unknown */
	struct et_memcg memcg;
	/* host-wide (ROOT/etc): the off switch (ET_HOSTWIDE_OFF) exists; the
	 * word of /etc/ld.so.preload that is `enable --binary`'s entry ("":
	 * none); the programs /etc/enormoustext/binaries lists (-1: none) */
	bool hw_off;
	char hw_entry[PATH_MAX];
	long hw_programs;
	/* the list's ET_HOSTWIDE_ALL line (enable --all); why the library
	 * would not trust the list, the settings or the off switch (NULL: it
	 * would); the settings file: there, its settings as one line
	 * ("NAME=VALUE, ..."), its first line that is no setting or one the
	 * host may not set (0: none) */
	bool hw_all;
	const char *hw_dir_untrusted, *hw_list_untrusted, *hw_conf_untrusted;
	bool hw_conf;
	char hw_settings[2048];
	int hw_conf_bad_line, hw_conf_refused_line;
	char hw_conf_speaks[PATH_MAX + 256];   /* settings that would make processes speak ("": none) */
	/* every library /etc/ld.so.preload names by a path (its words with a
	 * '/' and no '$'; the first ET_TOOL_HW_LIBS), each checked whole by
	 * sofile.c's et_tool_so_check: its path, and what is wrong ("": it is
	 * whole); how many are not */
	struct {
		char path[PATH_MAX];
		char problem[256];
	} hw_libs[ET_TOOL_HW_LIBS];
	size_t hw_nlibs, hw_broken;
	struct et_tool_daemon dm;
	bool hw_daemon_wanted;     /* ET_HOSTWIDE_DAEMON_NOTE is there: enable --all wants the daemon */
};

/* Where `enormoustext daemon` keeps what it learnt, by default. */
#define ET_TOOL_DAEMON_STATE "/var/lib/enormoustext"

/* The settings of s->root ("/": this system; else a copy of sysfs, and
 * nothing probed), and unless probe is false the probes: the file probe's
 * file in probe_dir, else in the first of $TMPDIR, /var/tmp, /tmp on the
 * file system of ref (the PROGRAM of --explain; NULL: this command). */
void et_tool_host_read(struct et_tool_host *s, bool probe, const char *probe_dir, const char *ref);

/* The name of a statfs f_type ("ext4", ...; else its number, in buf). */
const char *et_tool_fs_name(long type, char *buf, size_t cap);
/* "2 MiB" */
const char *et_tool_mib(uint64_t H, char *buf, size_t cap);
/* The order auto tries, and why, as one line (status's own text). */
void et_tool_auto_reason(const struct et_tool_host *s, char *out, size_t cap);
/* The backends auto tries, "thp, then collapse" (none: the word for none). */
void et_tool_auto_chain(const struct et_tool_host *s, const char *none, char *out, size_t cap);

#endif


