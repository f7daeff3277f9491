/*
 * tools/enormoustext/perfmap.c — `enormoustext perfmap [-o FILE] [--json]
 * PID`: a perf map for a running process.
 *
 * The text the library moved sits in anonymous mappings, which perf cannot
 * name.  This finds them in /proc/PID/smaps (an anonymous executable
 * mapping whose nearest file mappings on both sides are the same object),
 * and writes the functions of those objects that overlap them — from each
 * object's own symbol table, with the library's et_perfmap_symbols — to
 * /tmp/perf-PID.map (or --output FILE), by outfile.c's rules (beside and
 * renamed in; a device or FIFO written as it is; in /tmp, no link followed).
 * The library can write the same map itself: ENORMOUSTEXT_PERFMAP=1.
 *
 * Owns: `perfmap`: finding a process's moved text, and its map file.
 * May call: core (smaps, elfsyms: et_perfmap_symbols; outfile: the file,
 * no link followed in /tmp), output.c (messages), msg.c, common.c.
 * Never: writes the map by hand; follows a link at the default name.
 */
#include "tool.h"
#include "opts.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { O_OUTPUT = 1, O_JSON };

static const struct et_opt options[] = {
	{ "output", 'o', "FILE", "write FILE instead of /tmp/perf-PID.map", O_OUTPUT, 0, 0, 0, NULL,
	  ET_COMP_FILE },
	{ "json", 0, NULL,
	  "JSON on stdout: pid, file (null when nothing was\n"
	  "written), objects, functions, moved_bytes",
	  O_JSON, 0, 0, 0, NULL, 0 },
	{ NULL, 0, NULL, NULL, 0, 0, 0, 0, NULL, 0 },
};

static const struct et_cmd_spec spec = {
	.name = "perfmap",
	.forms = { { NULL, "PID" } },
	.about = "Write a perf map (\"START SIZE name\" lines, the format perf reads from\n"
	         "/tmp/perf-PID.map) naming the functions in the text that libenormoustext\n"
	         "moved to anonymous huge pages in process PID, so that perf report names them.\n"
	         "Reading another user's process needs ptrace read access to it (the same user\n"
	         "and a dumpable process, or CAP_SYS_PTRACE: root).\n",
	.sections = { { NULL, options } },
	.tail = "Exit status: 0 done (also when PID has no moved text: nothing is written);\n"
	        "1 PID does not exist or cannot be read, or FILE cannot be written; 2 usage\n"
	        "error.\n",
	.operand = ET_COMP_PID,
};

const struct et_cmd_spec *et_cmd_perfmap_spec(void)
{
	return &spec;
}

static bool is_file(const char *p)
{
	return p[0] == '/' && !strstr(p, " (deleted)");
}

static bool is_anon_exec(const struct et_smaps *sm, const struct et_vma *v)
{
	const char *p = et_vma_path(sm, v);
	return (v->prot & 4) && v->inode == 0 && (!p[0] || !strcmp(p, "/anon_hugepage (deleted)"));
}

/* The load base of `path` in the process: where its first PT_LOAD's page
 * went, minus that page's address in the file's layout. */
static bool load_base(const struct et_smaps *sm, const char *path, uint64_t inode, uint64_t *base)
{
	uint64_t start = 0;
	bool found = false;
	for (size_t i = 0; i < sm->count && !found; i++) {
		const struct et_vma *v = &sm->vmas[i];
		if (v->inode == inode && v->offset == 0 && !strcmp(et_vma_path(sm, v), path)) {
			start = v->start;
			found = true;
		}
	}
	if (!found)
		return false;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ElfW(Ehdr) eh;
	bool ok = pread(fd, &eh, sizeof eh, 0) == (ssize_t)sizeof eh && !memcmp(eh.e_ident, ELFMAG, SELFMAG) &&
	          eh.e_phentsize == sizeof(ElfW(Phdr)) && eh.e_phnum > 0 && eh.e_phnum < 256;
	uint64_t first = 0;
	for (unsigned i = 0; ok && i < eh.e_phnum; i++) {
		ElfW(Phdr) ph;
		if (pread(fd, &ph, sizeof ph, (off_t)(eh.e_phoff + i * sizeof ph)) != (ssize_t)sizeof ph) {
			ok = false;
			break;
		}
		if (ph.p_type == PT_LOAD) {
			first = ph.p_vaddr & ~(uint64_t)(sysconf(_SC_PAGESIZE) - 1);
			break;
		}
	}
	close(fd);
	if (!ok)
		return false;
	*base = eh.e_type == ET_EXEC ? 0 : start - first;
	return true;
}

int et_cmd_perfmap(int argc, char **argv)
{
	const char *output = NULL;
	bool json = false;
	struct et_args args;
	et_args_init(&args, &spec, argc, argv);
	int c;
	while ((c = et_args_next(&args)) > 0) {
		switch (c) {
		case O_OUTPUT: output = args.val; break;
		case O_JSON: json = true; break;
		}
	}
	if (c < 0)
		return et_args_exit(c);
	if (args.nops != 1)
		return et_tool_usage("perfmap takes one PID");
	long pid;
	if (et_tool_parse_pid(args.ops[0], &pid) != 0)
		return et_tool_usage("'%s' is not a process id", args.ops[0]);

	char path[64], out_path[4096];
	snprintf(path, sizeof path, "/proc/%lld/smaps", (long long)pid);
	struct et_smaps sm;
	int err = et_smaps_read(&sm, path);
	if (err == -ESRCH)
		err = -ENOENT;
	if (err == -EACCES || err == -EPERM) {
		et_tool_err("process %lld: permission denied reading %s (%s)", (long long)pid, path,
		            et_tool_denied_why());
		return ET_EXIT_BAD;
	}
	if (err) {
		et_tool_err("process %lld: %s", (long long)pid,
		            err == -ENOENT ? "no such process" : strerror(-err));
		return ET_EXIT_BAD;
	}
	if (output)
		snprintf(out_path, sizeof out_path, "%s", output);
	else
		snprintf(out_path, sizeof out_path, "/tmp/perf-%lld.map", (long long)pid);
	/* the default name is in /tmp, anyone's: no link followed there, and
	 * only a regular file replaced (as the library does) */
	unsigned flags = output ? 0 : ET_OUT_NOFOLLOW | ET_OUT_FILES_ONLY;

	struct et_out *out = NULL;
	size_t functions = 0, objects = 0;
	uint64_t moved = 0;
	int status = ET_EXIT_OK;
	/* Each anonymous executable mapping between two mappings of one file
	 * belongs to that file's object; an object's ranges are written
	 * together, so each of its functions is named once. */
	size_t nv = sm.count;
	long *owner = calloc(nv ? nv : 1, sizeof *owner);
	if (!owner) {
		et_smaps_free(&sm);
		et_tool_err("out of memory");
		return ET_EXIT_BAD;
	}
	for (size_t i = 0; i < nv; i++) {
		owner[i] = -1;
		if (!is_anon_exec(&sm, &sm.vmas[i]))
			continue;
		long prev = -1, next = -1;
		for (long j = (long)i - 1; j >= 0 && prev < 0; j--)
			if (!is_anon_exec(&sm, &sm.vmas[j]))
				prev = j;
		for (size_t j = i + 1; j < nv && next < 0; j++)
			if (!is_anon_exec(&sm, &sm.vmas[j]))
				next = (long)j;
		if (prev < 0 || next < 0)
			continue;
		const struct et_vma *a = &sm.vmas[prev], *b = &sm.vmas[next];
		const char *pa = et_vma_path(&sm, a);
		if (is_file(pa) && a->inode == b->inode && !strcmp(pa, et_vma_path(&sm, b)))
			owner[i] = prev;
	}
	uint64_t ranges[2 * 64];
	for (size_t i = 0; i < nv && status == ET_EXIT_OK; i++) {
		if (owner[i] < 0)
			continue;
		const struct et_vma *o = &sm.vmas[owner[i]];
		const char *opath = et_vma_path(&sm, o);
		uint64_t base;
		if (!load_base(&sm, opath, o->inode, &base))
			continue;
		if (!out) {
			out = malloc(sizeof *out);
			int e = out ? et_out_open(out, out_path, flags) : -ENOMEM;
			if (e) {
				et_tool_out_error(out_path, out, e);
				free(out);
				out = NULL;
				status = ET_EXIT_BAD;
				break;
			}
		}
		/* This object's ranges (up to 64 at a time), marked done. */
		size_t n = 0;
		for (size_t j = i; j < nv && n < 64; j++) {
			if (owner[j] < 0 || sm.vmas[owner[j]].inode != o->inode ||
			    strcmp(et_vma_path(&sm, &sm.vmas[owner[j]]), opath) != 0)
				continue;
			ranges[2 * n] = sm.vmas[j].start;
			ranges[2 * n + 1] = sm.vmas[j].end;
			moved += sm.vmas[j].end - sm.vmas[j].start;
			owner[j] = -1;
			n++;
		}
		functions += et_perfmap_symbols(out, opath, base, ranges, n);
		objects++;
	}
	free(owner);
	et_smaps_free(&sm);
	if (out) {
		int e = status == ET_EXIT_OK ? et_out_commit(out) : (et_out_abort(out), 0);
		if (e) {
			et_tool_out_error(out_path, out, e);
			status = ET_EXIT_BAD;
		}
		free(out);
	}
	if (status == ET_EXIT_OK && json) {
		struct et_json j;
		et_json_init(&j, stdout);
		et_json_obj(&j, NULL);
		et_json_i64(&j, "pid", pid);
		if (moved)
			et_json_str(&j, "file", out_path);
		else
			et_json_null(&j, "file");
		et_json_u64(&j, "objects", objects);
		et_json_u64(&j, "functions", functions);
		et_json_u64(&j, "moved_bytes", moved);
		et_json_obj_end(&j);
		et_json_end(&j);
	} else if (status == ET_EXIT_OK) {
		if (moved == 0)
			printf("process %lld has no moved text: nothing written\n", (long long)pid);
		else
			printf("%s: %zu function%s in the moved text of %zu object%s (%llu byte%s)\n", out_path,
			       functions, et_tool_s(functions), objects, et_tool_s(objects),
			       (unsigned long long)moved, et_tool_s(moved));
	}
	return status;
}
