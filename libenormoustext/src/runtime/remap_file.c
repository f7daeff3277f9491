/*
 * runtime/remap_file.c — the remap stage's knowledge of what a window is:
 * the file behind it, and whether it is still the text the pass planned.
 *
 * A window's path is only a way to find its file: the file opened must be
 * the very inode (and device) the mapping holds, and on overlayfs even
 * that does not prove the bytes are the same (et_remap_file_open).  Under
 * the loader's lock, a window is still the text planned when the loader
 * has unloaded nothing since the pass read its list, or when its object
 * is still loaded from the same file (et_remap_file_still_planned); the
 * loader's list is read at most once per locked section
 * (et_remap_file_presence_forget starts a new one).
 *
 * Owns: the file cache of a round (one open file per object), the
 * identity check of a file against a window, the objects' still_loaded
 * marks.
 * May call: core (util: a mount's device), runtime/loader (the list of
 * objects, from inside its lock).
 * Never: opens a file that could block (a FIFO put at the path); trusts a
 * path without its inode; changes a mapping; allocates.
 */
#include "runtime/remap_file.h"

#include "core/util.h"
#include "runtime/loader.h"

#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>

#define OVERLAYFS_MAGIC 0x794c7630

static bool on_overlay(int fd)
{
	int saved = errno;
	struct statfs st;
	bool r = fstatfs(fd, &st) == 0 && (unsigned long)(unsigned int)st.f_type == OVERLAYFS_MAGIC;
	errno = saved;
	return r;
}

/* Is the file stat(2) gave st (open at fd, or at path) the one the window
 * maps?  Its inode, and its device as maps gives it: stat's, or the
 * device of the mount it is on (a btrfs subvolume's files stat with a
 * device of their own, while maps shows the file system's). */
static bool same_file(const struct et_window *w, const struct stat *st, int fd, const char *path)
{
	if ((uint64_t)st->st_ino != w->inode)
		return false;
	if (major(st->st_dev) == w->dev_major && minor(st->st_dev) == w->dev_minor)
		return true;
	uint32_t maj, min;
	return et_file_mount_dev(fd, path, &maj, &min) && maj == w->dev_major && min == w->dev_minor;
}

/* An open file descriptor for the file the window maps, or -1 with the
 * reason set.  The path is only a way to find the file: it must be the
 * very inode the mapping holds (a package upgrade replaces the file).
 * On overlayfs that is not enough: a file copied up to the upper layer
 * (opened for writing, or its metadata changed) keeps its st_dev and
 * st_ino, while the path now opens the upper copy, which may say
 * something else than the lower file the process maps — fc->overlay, and
 * the bytes are compared before they replace any (remap_stage.c's
 * stage_file and copy_in, remap_swap.c). */
int et_remap_file_open(struct et_run *run, struct et_window *w, struct et_file_cache *fc)
{
	if (!fc->tried || fc->object != w->object) {
		if (fc->fd >= 0)
			close(fc->fd);
		fc->fd = -1;
		fc->tried = true;
		fc->object = w->object;
		const char *path = run->objs[w->object].path;
		/* O_NONBLOCK: whatever is at the path now (a FIFO put there
		 * since the load?) must not block the open */
		int fd = path[0] ? open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY) : -1;
		struct stat st;
		if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || !same_file(w, &st, fd, NULL))) {
			close(fd);
			fd = -2;
		}
		fc->fd = fd;
		fc->overlay = fd >= 0 && on_overlay(fd);
	}
	if (fc->fd < 0) {
		w->reason = ET_R_FILE_CHANGED;
		w->err = 0;
		return -1;
	}
	/* the same file, but this window may come from another mapping of it */
	return fc->fd;
}

/*
 * Is window w still the text the pass planned it as?  Called with the
 * loader's lock held, with `subs` the loader's count of objects removed
 * now.  Yes when the loader has removed nothing since the pass read its
 * list (run->loader_subs).  Otherwise, yes when w's object is still
 * loaded (the loader unmaps an object only when it unloads it: a loaded
 * object's mappings are its own) and the file at its path is still the one
 * its window maps (an object unloaded and loaded again at the same place
 * from a file replaced meanwhile is not the same text).  Objects found
 * through a dlmopen namespace's link maps are not looked for: no.
 */
struct presence {
	struct et_run *run;
};

static int mark_loaded(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct et_run *run = ((struct presence *)arg)->run;
	for (size_t i = 0; i < run->nobjs; i++) {
		struct et_object *o = &run->objs[i];
		if (!o->foreign && o->base == info->dlpi_addr && o->phdr == (uintptr_t)info->dlpi_phdr &&
		    (o->is_main || !strcmp(o->path, info->dlpi_name ? info->dlpi_name : "")))
			o->still_loaded = true;
	}
	return 0;
}

static bool g_presence_read;   /* still_loaded is up to date for this swap */

void et_remap_file_presence_forget(void)
{
	g_presence_read = false;
}

static void read_presence(struct et_run *run)
{
	for (size_t i = 0; i < run->nobjs; i++)
		run->objs[i].still_loaded = false;
	struct presence p = { run };
	et_loader_iterate(mark_loaded, &p);   /* nested: the lock is this thread's */
	g_presence_read = true;
}

bool et_remap_file_still_planned(struct et_run *run, const struct et_window *w, unsigned long long subs)
{
	if (run->loader_subs == ET_LOADER_SUBS_UNKNOWN || subs == run->loader_subs)
		return true;
	if (!g_presence_read)
		read_presence(run);
	const struct et_object *o = &run->objs[w->object];
	if (!o->still_loaded)
		return false;
	struct stat st;
	return !w->inode || (o->path[0] && stat(o->path, &st) == 0 && same_file(w, &st, -1, o->path));
}
