/*
 * tools/enormoustext/cmd/ocihook.c — `enormoustext oci-hook`: an OCI
 * runtime hook (createRuntime or prestart: podman and CRI-O read it from
 * hooks.d, deploy/oci/) that primes the text of a container's root before
 * its first process runs, so that the first run is already huge from the
 * page cache, nothing copied, no code of ours in the container.
 *
 * The runtime runs it with the container's state on standard input (the
 * OCI runtime spec: {"ociVersion", "id", "status", "pid", "bundle", ...}).
 * The root is /proc/PID/root where the state names a process (the
 * container's mount namespace as its process sees it, overlayfs included),
 * else the bundle's config.json root.path (relative to the bundle, or
 * absolute).  Every regular file of that root's filesystems that starts
 * with an ELF header is handed to pagecache.c (`prime`'s work: only the
 * congruent windows of its text, never a page a process maps or a dirty
 * one); a hook never fails a container: it exits 0 whatever it found,
 * with one summary line on stderr (the runtime's log), 2 only for bad
 * usage.
 *
 * Owns: `oci-hook`: reading the state, finding the root, the walk.
 * May call: pagecache.c (et_tool_prime_file), core (sysinfo), msg.c,
 * common.c.
 * Never: fails a container's start; writes into the container's root;
 * follows a symbolic link out of the root (FTW_PHYS) or crosses into
 * /proc, /sys or /dev.
 */
#include "tool.h"
#include "opts.h"
#include "pagecache.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { O_VERBOSE = 1 };

static const struct et_opt options[] = {
	{ "verbose", 'v', NULL, "one line on stderr per file primed", O_VERBOSE, 0, 0, 0, NULL, 0 },
	{ NULL, 0, NULL, NULL, 0, 0, 0, 0, NULL, 0 },
};

static const struct et_cmd_spec spec = {
	.name = "oci-hook",
	.forms = { { NULL, NULL } },
	.about = "An OCI runtime hook (createRuntime or prestart; podman and CRI-O read it from\n"
	         "hooks.d): prime the text of a container's root in the page cache before its\n"
	         "first process runs, so that its congruent programs and libraries are huge on\n"
	         "their first run, with nothing copied and no code of ours in the container.\n"
	         "Reads the container's state (JSON) on standard input, as a runtime gives it.\n",
	.sections = { { NULL, options, NULL } },
	.tail = "The root: /proc/PID/root where the state names a process, else the bundle's\n"
	        "config.json root.path.  Every ELF file of it is primed as `enormoustext\n"
	        "prime` primes a file.  One summary line on stderr.\n"
	        "\n"
	        "Exit status: 0 always (a hook never fails a container); 2 usage error.\n",
	.operand = ET_COMP_NONE,
};

static uint64_t g_H;

const struct et_cmd_spec *et_cmd_oci_hook_spec(void)
{
	return &spec;
}

/* The string value of "key" in a JSON text (the first one), unescaped
 * simply (\" and \\): false when there is none. */
static bool json_string(const char *text, const char *key, char *out, size_t cap)
{
	char k[64];
	snprintf(k, sizeof k, "\"%s\"", key);
	const char *p = strstr(text, k);
	if (!p)
		return false;
	p += strlen(k);
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == ':')
		p++;
	if (*p != '"')
		return false;
	size_t n = 0;
	for (p++; *p && *p != '"' && n + 1 < cap; p++) {
		if (*p == '\\' && p[1])
			p++;
		out[n++] = *p;
	}
	out[n] = '\0';
	return *p == '"';
}

static long json_number(const char *text, const char *key)
{
	char k[64];
	snprintf(k, sizeof k, "\"%s\"", key);
	const char *p = strstr(text, k);
	if (!p)
		return 0;
	p += strlen(k);
	while (*p == ' ' || *p == ':')
		p++;
	return strtol(p, NULL, 10);
}

/* The container's root: /proc/PID/root, or BUNDLE/config.json's root.path. */
static bool find_root(const char *state, char *root, size_t cap)
{
	long pid = json_number(state, "pid");
	if (pid > 0) {
		snprintf(root, cap, "/proc/%ld/root/", pid);   /* the slash: the walk goes through the link */
		if (access(root, X_OK) == 0)
			return true;
	}
	char bundle[PATH_MAX], cfgp[PATH_MAX + 16];
	if (!json_string(state, "bundle", bundle, sizeof bundle))
		return false;
	snprintf(cfgp, sizeof cfgp, "%s/config.json", bundle);
	int fd = open(cfgp, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	char *cfg = et_tool_read_fd_text(fd, 16u << 20);
	close(fd);
	char path[PATH_MAX];
	/* "root": {"path": "rootfs", ...} */
	const char *r = cfg ? strstr(cfg, "\"root\"") : NULL;
	bool ok = r && json_string(r, "path", path, sizeof path);
	free(cfg);
	if (!ok)
		return false;
	int n = path[0] == '/' ? snprintf(root, cap, "%s", path) : snprintf(root, cap, "%s/%s", bundle, path);
	return n > 0 && (size_t)n < cap;
}

static bool g_verbose;
static unsigned long g_elf, g_primed_files, g_windows, g_huge;
static const char *g_root;

/* A 64-bit ELF program or library with a loadable executable segment of
 * at least a huge page (debug files, objects, small programs: nothing to
 * prime, and pagecache.c would say so on the runtime's log). */
static bool has_text(int fd)
{
	Elf64_Ehdr eh;
	if (pread(fd, &eh, sizeof eh, 0) != (ssize_t)sizeof eh || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || (eh.e_type != ET_EXEC && eh.e_type != ET_DYN) ||
	    eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum == 0 || eh.e_phnum > 256)
		return false;
	Elf64_Phdr ph[256];
	size_t len = (size_t)eh.e_phnum * sizeof *ph;
	if (pread(fd, ph, len, (off_t)eh.e_phoff) != (ssize_t)len)
		return false;
	for (unsigned i = 0; i < eh.e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && (ph[i].p_flags & PF_X) && ph[i].p_filesz >= g_H)
			return true;
	return false;
}

static int visit(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)ftw;
	if (type == FTW_D) {
		/* the root's own /proc, /sys, /dev are not files of the image */
		const char *rel = path + strlen(g_root);
		rel += *rel == '/';
		if (!strcmp(rel, "proc") || !strcmp(rel, "sys") || !strcmp(rel, "dev"))
			return FTW_SKIP_SUBTREE;
		return FTW_CONTINUE;
	}
	if (type != FTW_F || !S_ISREG(st->st_mode) || st->st_size < (off_t)g_H)
		return FTW_CONTINUE;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return FTW_CONTINUE;
	bool elf = has_text(fd);
	close(fd);
	if (!elf)
		return FTW_CONTINUE;
	g_elf++;
	struct et_tool_primed r;
	memset(&r, 0, sizeof r);
	if (et_tool_prime_file(path, g_H, false, &r) != 0 || !r.congruent || !r.windows)
		return FTW_CONTINUE;
	unsigned long huge = (unsigned long)(r.n[ET_WIN_HUGE_BEFORE] + r.n[ET_WIN_PRIMED]);
	g_windows += (unsigned long)r.windows;
	g_huge += huge;
	g_primed_files += huge > 0;
	if (g_verbose)
		et_tool_err("%s: %lu of %llu windows huge in the page cache", path + strlen(g_root), huge,
		            (unsigned long long)r.windows);
	return FTW_CONTINUE;
}

int et_cmd_oci_hook(int argc, char **argv)
{
	struct et_args a;
	et_args_init(&a, &spec, argc, argv);
	int c;
	while ((c = et_args_next(&a)) > 0)
		if (c == O_VERBOSE)
			g_verbose = true;
	if (c < 0)
		return et_args_exit(c);
	if (a.nops)
		return et_tool_usage("oci-hook takes no operand ('%s'): the state comes on standard input", a.ops[0]);
	char *state = et_tool_read_fd_text(0, 1u << 20);
	char root[PATH_MAX + 32];
	if (!state || !find_root(state, root, sizeof root)) {
		et_tool_err("no container root in the state on standard input (neither a pid nor a bundle with a "
		            "config.json root.path): nothing primed");
		free(state);
		return ET_EXIT_OK;
	}
	free(state);
	struct et_sysinfo si;
	et_sysinfo_read_pmd(&si, "/");
	g_H = si.pmd_size;
	/* walked from inside: nftw would take /proc/PID/root for the link it
	 * is (FTW_PHYS) and walk nothing */
	int here = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (chdir(root) != 0) {
		et_tool_err("%s: %s: nothing primed", root, strerror(errno));
		if (here >= 0)
			close(here);
		return ET_EXIT_OK;
	}
	g_root = ".";
	if (nftw(".", visit, 16, FTW_PHYS | FTW_MOUNT | FTW_ACTIONRETVAL) != 0)
		et_tool_err("%s: %s (walked in part)", root, strerror(errno));
	if (here >= 0) {
		if (fchdir(here) != 0)
			et_tool_err("cannot go back to the directory it started in: %s", strerror(errno));
		close(here);
	}
	et_tool_err("%s: %lu ELF file%s with a huge page of text or more, %lu primed: %lu of %lu windows huge in the page cache", root, g_elf,
	            g_elf == 1 ? "" : "s", g_primed_files, g_huge, g_windows);
	return ET_EXIT_OK;
}
