/*
 * daemon.h — what `enormoustext daemon` shares between its two files:
 * daemon.c watches (its options, fanotify's exec events, the scan of
 * /proc, the pidfds of the processes that hold pending files, the main
 * loop); daemon_files.c keeps the table of the files it knows (learning
 * them, priming them, checking them again, its state on disk).
 */
#ifndef ET_TOOL_DAEMON_H
#define ET_TOOL_DAEMON_H

#include "tool.h"
#include "pagecache.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

/* a file's first retry after this, then twice as long each time */
#define RETRY_FIRST_NS 1000000000ull
/* figures alone (exec events, quiet programs) are written at most this often */
#define FIGURES_NS 1000000000ull

/* DF_LEFT_ALONE: on a filesystem it primes only when asked (FUSE, network) */
enum et_dfile_state { DF_PENDING, DF_PRIMED, DF_NOT_CONGRUENT, DF_GAVE_UP, DF_LEFT_ALONE };

struct et_dfile {
	dev_t dev;
	ino_t ino;
	int fd;                 /* open while pending: primed through /proc/self/fd/N */
	char *path;             /* as a process named it (its mount namespace), malloc'd */
	bool host;              /* path names this very file here too: kept in STATE/known */
	bool exe;               /* a program: learnt or seen from its exec */
	bool quiet;             /* its exec is not reported now (an ignore mark) */
	enum et_dfile_state state;
	const char *why;        /* DF_LEFT_ALONE, or DF_PENDING on a writer: why (a static string) */
	unsigned tries;
	uint64_t next_ns;
	uint64_t primed_ns;     /* when it was last primed or checked */
	uint64_t maps_ns;       /* when a process of this program last had its maps read */
	uint64_t windows, huge, held;
	uint64_t primed_now;    /* windows its last prime made huge */
	uint64_t again;         /* checks that found windows no longer huge */
	uint64_t events;        /* its exec events read */
	/* pending on windows processes map small: pidfds of those processes
	 * (hold[0..nhold)), polled, so that it is tried again as soon as
	 * the last of them has ended */
	int hold[8];
	int nhold;
	/* the processes its last try found mapping its small pages (status
	 * names them): "pid 123 (cc1), pid 456 (ld)", and whether there were
	 * more than pagecache.c names */
	char held_by[160];
};

/* The daemon's settings (daemon.c sets them from its options) and what
 * both files keep up to date. */
struct et_daemon {
	const char *state;          /* --state */
	const char *host_root;      /* --host-root: where the host's / is ("": here) */
	const char *only[16];       /* --only */
	int nonly;
	bool verbose;
	bool fuse, network_fs;      /* --fuse, --network-fs: those filesystems too */
	uint64_t H;                 /* the PMD size */
	uint64_t recheck_ns;        /* --recheck */
	int fan;                    /* the fanotify group (-1: --once) */
	pid_t self;
	struct et_dfile *files;     /* the files it knows */
	size_t nfiles;
	size_t nholding;            /* files with holders' pidfds open */
	bool dirty;                 /* STATE to be written */
	/* figures in STATE/daemon.json: exec events read, programs quiet now */
	uint64_t events, nquiet;
	bool counted;               /* figures changed since written */
	uint64_t written_ns;        /* when STATE was last written */
};
extern struct et_daemon et_dm;

/* daemon_files.c */

/* Is a filesystem of mountinfo's TYPE one it watches?  Local ones always;
 * FUSE with --fuse, network and cluster ones with --network-fs. */
bool et_daemon_fs_watched(const char *type);

uint64_t et_daemon_now_ns(void);
/* The file it knows as (dev, ino), or NULL. */
struct et_dfile *et_daemon_find(dev_t dev, ino_t ino);
/* Prime k once (through its open descriptor), and decide what next. */
void et_daemon_prime_one(struct et_dfile *k);
/* A file it knows, in use again (fd: open on it, taken over): primed once
 * more if it was primed --recheck ago or longer, else nothing. */
void et_daemon_recheck(struct et_dfile *k, int fd);
/* A file a process maps executable (fd: open on it, taken over; st: its
 * fstat): what it knows of it, learnt now if new (NULL: not wanted, or no
 * room). */
struct et_dfile *et_daemon_learn_st(int fd, const char *path, const struct stat *st);
/* The files process pid maps executable, each opened through map_files. */
void et_daemon_learn_maps(pid_t pid);
/* STATE/known and STATE/daemon.json, written whole where something changed
 * (figures alone: at most every FIGURES_NS; last: now). */
void et_daemon_write_state(bool last);
/* STATE/known: the files primed before, primed again now. */
void et_daemon_prime_known(void);
/* One of k's holders ended (fd: its pidfd, closed here): once the last
 * has, k is tried again (a second after its last try at the soonest). */
void et_daemon_holder_ended(struct et_dfile *k, int fd);

#endif
