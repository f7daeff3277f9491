/*
 * tools/enormoustext/cmd/perfmap.c — `enormoustext perfmap [-o FILE] [--json]
 * PID`: a perf map for a running process.
 *
 * The text the library moved sits in anonymous mappings, which perf cannot
 * name.  This finds them in /proc/PID/smaps and says whose text each is by
 * the one rule of core/smaps.c (et_smaps_attribute: inside an executable
 * PT_LOAD of a mapped ELF file, at its load bias; the neighbour rule only
 * where the file cannot be read), and writes the functions of those
 * objects that overlap them — from each object's own symbol table, read
 * from the file as the process maps it (et_smaps_mapped_file), with the
 * library's et_perfmap_symbols — to
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

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
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
	.sections = { { NULL, options, NULL } },
	.tail = "Exit status: 0 done (also when PID has no moved text: nothing is written);\n"
	        "1 PID does not exist or cannot be read, or FILE cannot be written; 2 usage\n"
	        "error.\n",
	.operand = ET_COMP_PID,
};

const struct et_cmd_spec *et_cmd_perfmap_spec(void)
{
	return &spec;
}

/* The load bias of the object whose text anonymous mapping i holds, and a
 * path its symbols can be read from: the one rule's bias, else (the file
 * could not be read when attributing) none. */
static bool owner_file(const struct et_smaps *sm, size_t i, const char *dir, char *path, size_t cap,
                       uint64_t *bias)
{
	const struct et_vma *o = et_smaps_copied_from(sm, i);
	if (!o || !et_smaps_copied_bias(sm, i, bias))
		return false;
	int fd = et_smaps_mapped_file(sm, o, dir, path, cap);
	if (fd < 0)
		return false;
	close(fd);
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
	if (et_tool_refuse_kthread("/proc", pid))
		return ET_EXIT_BAD;

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
	/* Whose text each anonymous executable mapping holds (the one rule);
	 * an object's ranges are written together, so each of its functions
	 * is named once. */
	char dir[64];
	snprintf(dir, sizeof dir, "/proc/%lld", (long long)pid);
	et_smaps_attribute(&sm, dir);
	size_t nv = sm.count;
	long *owner = calloc(nv ? nv : 1, sizeof *owner);
	if (!owner) {
		et_smaps_free(&sm);
		et_tool_err("out of memory");
		return ET_EXIT_BAD;
	}
	for (size_t i = 0; i < nv; i++) {
		const struct et_vma *o = (sm.vmas[i].prot & PROT_EXEC) ? et_smaps_copied_from(&sm, i) : NULL;
		owner[i] = o ? (long)(o - sm.vmas) : -1;
	}
	uint64_t ranges[2 * 64];
	char opath[PATH_MAX + 64];
	for (size_t i = 0; i < nv && status == ET_EXIT_OK; i++) {
		if (owner[i] < 0)
			continue;
		const struct et_vma *o = &sm.vmas[owner[i]];
		uint64_t base;
		if (!owner_file(&sm, i, dir, opath, sizeof opath, &base)) {
			owner[i] = -1;
			continue;
		}
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
		/* This object's ranges (up to 64 at a time: one load of it, the
		 * same file at the same bias), marked done. */
		size_t n = 0;
		for (size_t j = i; j < nv && n < 64; j++) {
			uint64_t bj;
			if (owner[j] < 0 || !et_smaps_copied_bias(&sm, j, &bj) || bj != base ||
			    sm.vmas[owner[j]].inode != o->inode ||
			    strcmp(et_vma_path(&sm, &sm.vmas[owner[j]]), et_vma_path(&sm, o)) != 0)
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
