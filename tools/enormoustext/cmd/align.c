/*
 * tools/enormoustext/cmd/align.c — `enormoustext align`: the opt-in
 * rewrite that makes a PIE executable congruent.  The kernel loads a PIE
 * program at a random base aligned to the largest p_align of its PT_LOAD
 * headers; at 4 KiB its text lands at an address no file offset matches
 * modulo 2 MiB, and the page cache's huge folios cannot be mapped huge
 * there.  With the executable PT_LOAD's p_align set to the huge page size
 * the base is 2 MiB-aligned and the text congruent: primed (the daemon,
 * `prime`), it is mapped huge by the kernel in every process, nothing
 * copied, no code of ours in any process — as prelink once edited
 * installed programs.
 *
 * Only the p_align fields change (8 bytes each, in place, fsync'ed).  The
 * values before, and checksums of the whole file before and after, are
 * kept in STATE/aligned/ first, so that --undo puts the file back byte for
 * byte, and only when it is still the file align left (a package upgrade
 * replaced it: nothing to undo, said).
 *
 * Owns: `align`: the checks, the rewrite, its record, --undo, --list.
 * May call: core (sysinfo), msg.c, common.c, files.c.
 * Never: changes a byte but the p_align fields; changes a program that
 * runs (the kernel refuses: ETXTBSY), one that is not a PIE executable of
 * this machine, or one whose text would not be congruent at an aligned
 * base; leaves a file changed without its record.
 */
#include "tool.h"
#include "host.h"
#include "opts.h"


#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { O_UNDO = 1, O_DRY, O_STATE, O_LIST };

static const struct et_opt options[] = {
	{ "undo", 'u', NULL, "put each FILE back as it was, byte for byte", O_UNDO, 0, 1, 0, NULL, 0 },
	{ "list", 'l', NULL, "list the files align changed (no FILE)", O_LIST, 0, 1, 0, NULL, 0 },
	{ "dry-run", 'n', NULL, "say what would change; change nothing", O_DRY, 0, 0, 0, NULL, 0 },
	{ "state", 's', "DIR",
	  "where the records are kept (default " ET_TOOL_DAEMON_STATE ";\n"
	  "the records in DIR/aligned)",
	  O_STATE, 0, 0, 0, NULL, ET_COMP_DIR },
	{ NULL, 0, NULL, NULL, 0, 0, 0, 0, NULL, 0 },
};

static const struct et_cmd_spec spec = {
	.name = "align",
	.forms = { { NULL, "FILE..." }, { NULL, NULL } },
	.about = "Opt in a PIE executable to huge text from the page cache: set its executable\n"
	         "PT_LOAD header's p_align to the huge page size (2 MiB), so that the kernel\n"
	         "loads it at a 2 MiB-aligned base and its text is congruent; the daemon (or\n"
	         "'enormoustext prime') then keeps it huge in the page cache and every process\n"
	         "maps it huge, with no library and no copy.  Only the p_align fields change.\n"
	         "The values before and checksums of the file are kept first, so that --undo\n"
	         "puts it back byte for byte.  A program that runs cannot be changed (stop it\n"
	         "first).  What it costs: package verification (debsums, rpm -V) reports the\n"
	         "file changed, a package upgrade replaces it unaligned (align it again), and\n"
	         "its load address keeps 9 fewer random bits (2 MiB instead of 4 KiB steps).\n",
	.sections = { { NULL, options, NULL } },
	.tail = "Exit status: 0 done (or nothing to do, said); 1 a FILE could not be changed\n"
	        "(the line names it and why; nothing changed in it); 2 usage error.\n",
	.operand = ET_COMP_FILE,
};

const struct et_cmd_spec *et_cmd_align_spec(void)
{
	return &spec;
}

static const char *g_state = ET_TOOL_DAEMON_STATE;
static uint64_t g_H;

/* FNV-1a, 64 bits, of the whole file: the record's check that a file is
 * still the one align left (not a digest against tampering). */
static int file_sum(int fd, uint64_t *sum)
{
	static unsigned char buf[1 << 16];
	uint64_t h = 1469598103934665603ull;
	off_t off = 0;
	for (;;) {
		ssize_t n = pread(fd, buf, sizeof buf, off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno ? -errno : -EIO;
		if (n == 0)
			break;
		for (ssize_t i = 0; i < n; i++) {
			h ^= buf[i];
			h *= 1099511628211ull;
		}
		off += n;
	}
	*sum = h;
	return 0;
}

/* The executable PT_LOAD headers to change: their index, the offset of
 * their p_align field in the file, its value. */
#define MAX_SEGS 8
struct plan {
	bool is64;
	int n;
	int idx[MAX_SEGS];
	uint64_t field[MAX_SEGS], old[MAX_SEGS];
	uint64_t text;     /* bytes of executable PT_LOAD */
};

/* Reads the headers of fd: 0 with *p (n == 0: already aligned), or -1 with
 * why. */
static int plan_read(int fd, struct plan *p, char *why, size_t cap)
{
	memset(p, 0, sizeof *p);
	unsigned char id[EI_NIDENT];
	if (pread(fd, id, sizeof id, 0) != (ssize_t)sizeof id || memcmp(id, ELFMAG, SELFMAG) != 0) {
		snprintf(why, cap, "not an ELF file");
		return -1;
	}
	Elf64_Ehdr eh;
	p->is64 = id[EI_CLASS] == ELFCLASS64;
	if (!p->is64 || id[EI_DATA] != (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB) ||
	    pread(fd, &eh, sizeof eh, 0) != (ssize_t)sizeof eh) {
		snprintf(why, cap, "not a 64-bit ELF file of this machine's byte order");
		return -1;
	}
#if defined(__x86_64__)
	const unsigned machine = EM_X86_64;
#elif defined(__aarch64__)
	const unsigned machine = EM_AARCH64;
#else
	const unsigned machine = eh.e_machine;
#endif
	if (eh.e_machine != machine) {
		snprintf(why, cap, "built for another machine (e_machine %u)", eh.e_machine);
		return -1;
	}
	if (eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum == 0 || eh.e_phnum > 4096) {
		snprintf(why, cap, "no usable program headers");
		return -1;
	}
	bool interp = false;
	int loads = 0;
	char odd[200] = "";
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;
		off_t at = (off_t)(eh.e_phoff + (uint64_t)i * sizeof ph);
		if (pread(fd, &ph, sizeof ph, at) != (ssize_t)sizeof ph) {
			snprintf(why, cap, "truncated (program header %u lies past the end)", i);
			return -1;
		}
		interp |= ph.p_type == PT_INTERP;
		if (ph.p_type != PT_LOAD)
			continue;
		loads++;
		if (!(ph.p_flags & PF_X))
			continue;
		p->text += ph.p_filesz;
		if (ph.p_align >= g_H)
			continue;
		if ((ph.p_vaddr - ph.p_offset) % g_H != 0) {
			if (!odd[0])
				snprintf(odd, sizeof odd, "its text would not be congruent at an aligned base either "
				         "(PT_LOAD %u: offset 0x%llx, address 0x%llx)", i, (unsigned long long)ph.p_offset,
				         (unsigned long long)ph.p_vaddr);
			continue;
		}
		if (p->n == MAX_SEGS) {
			snprintf(why, cap, "more than %d executable PT_LOAD headers", MAX_SEGS);
			return -1;
		}
		p->idx[p->n] = (int)i;
		p->field[p->n] = (uint64_t)at + offsetof(Elf64_Phdr, p_align);
		p->old[p->n] = ph.p_align;
		p->n++;
	}
	if (eh.e_type != ET_DYN || !interp) {
		snprintf(why, cap, "not a PIE executable (%s): the kernel loads it where its headers say%s",
		         eh.e_type == ET_EXEC ? "a fixed-address program" : interp ? "?" : "no interpreter: a library "
		         "or a static program",
		         eh.e_type == ET_EXEC ? ", congruent already" : "");
		return -1;
	}
	if (!loads || !p->text) {
		snprintf(why, cap, "no executable PT_LOAD");
		return -1;
	}
	if (odd[0]) {
		snprintf(why, cap, "%s", odd);
		return -1;
	}
	return 0;
}

/* STATE/aligned/<the path's FNV-1a>: one record a file. */
static void record_path(const char *real, char *out, size_t cap)
{
	uint64_t h = 1469598103934665603ull;
	for (const char *s = real; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ull;
	}
	snprintf(out, cap, "%s/aligned/%016llx", g_state, (unsigned long long)h);
}

struct record {
	char path[PATH_MAX];
	uint64_t before, after;
	struct plan p;
};

static int record_write(const char *rec, const struct record *r)
{
	char *t = NULL;
	size_t len;
	FILE *f = open_memstream(&t, &len);
	if (!f)
		return -ENOMEM;
	fprintf(f, "# enormoustext align: what it changed in this file ('enormoustext align --undo PATH')\n"
	           "path=%s\nbefore=%016llx\nafter=%016llx\n",
	        r->path, (unsigned long long)r->before, (unsigned long long)r->after);
	for (int i = 0; i < r->p.n; i++)
		fprintf(f, "p_align=%d %llu %llu\n", r->p.idx[i], (unsigned long long)r->p.field[i],
		        (unsigned long long)r->p.old[i]);
	fclose(f);
	int e = et_tool_make_parents(rec);
	if (e == 0)
		e = et_tool_write_atomic(rec, t, len, 0644);
	free(t);
	return e;
}

static int record_read(const char *rec, struct record *r)
{
	memset(r, 0, sizeof *r);
	char *t = NULL;
	size_t len;
	int e = et_tool_slurp(rec, &t, &len);
	if (e)
		return e;
	r->p.is64 = true;
	for (char *line = strtok(t, "\n"); line; line = strtok(NULL, "\n")) {
		unsigned long long a, b;
		int i;
		if (!strncmp(line, "path=", 5))
			snprintf(r->path, sizeof r->path, "%s", line + 5);
		else if (sscanf(line, "before=%llx", &a) == 1)
			r->before = a;
		else if (sscanf(line, "after=%llx", &a) == 1)
			r->after = a;
		else if (sscanf(line, "p_align=%d %llu %llu", &i, &a, &b) == 3 && r->p.n < MAX_SEGS) {
			r->p.idx[r->p.n] = i;
			r->p.field[r->p.n] = a;
			r->p.old[r->p.n] = b;
			r->p.n++;
		}
	}
	free(t);
	return r->path[0] && r->p.n ? 0 : -EINVAL;
}

/* The p_align fields of p set to val (or, val 0, back to p's old
 * values), then fsync: 0 or -errno. */
static int write_fields(int fd, const struct plan *p, uint64_t val)
{
	for (int i = 0; i < p->n; i++) {
		uint64_t v = val ? val : p->old[i];
		if (pwrite(fd, &v, sizeof v, (off_t)p->field[i]) != (ssize_t)sizeof v)
			return errno ? -errno : -EIO;
	}
	return fsync(fd) == 0 ? 0 : -errno;
}

static int open_rw(const char *path, int *fd)
{
	*fd = open(path, O_RDWR | O_CLOEXEC | O_NONBLOCK);
	if (*fd < 0) {
		et_tool_err("%s: %s%s", path, strerror(errno),
		            errno == ETXTBSY ? " (it runs: the kernel lets no one write a running program; stop it "
		                               "first)" : "");
		return -1;
	}
	struct stat st;
	if (fstat(*fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		et_tool_err("%s: not a regular file", path);
		close(*fd);
		return -1;
	}
	return 0;
}

static int align_one(const char *arg, bool dry)
{
	char real[PATH_MAX], why[512], rec[PATH_MAX + 64];
	if (!realpath(arg, real)) {
		et_tool_err("%s: %s", arg, strerror(errno));
		return ET_EXIT_BAD;
	}
	int fd;
	if (dry ? (fd = open(real, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) < 0 : open_rw(real, &fd) != 0) {
		if (dry)
			et_tool_err("%s: %s", real, strerror(errno));
		return ET_EXIT_BAD;
	}
	struct record r;
	memset(&r, 0, sizeof r);
	snprintf(r.path, sizeof r.path, "%s", real);
	if (plan_read(fd, &r.p, why, sizeof why) != 0) {
		et_tool_err("%s: %s: not changed", real, why);
		close(fd);
		return ET_EXIT_BAD;
	}
	if (r.p.n == 0) {
		printf("%s: aligned already (its text's p_align is %llu KiB or more): nothing to do\n", real,
		       (unsigned long long)(g_H >> 10));
		close(fd);
		return 0;
	}
	for (int i = 0; i < r.p.n; i++)
		printf("%s: PT_LOAD %d (text): p_align 0x%llx -> 0x%llx%s\n", real, r.p.idx[i],
		       (unsigned long long)r.p.old[i], (unsigned long long)g_H, dry ? " (dry run: not changed)" : "");
	if (dry) {
		close(fd);
		return 0;
	}
	record_path(real, rec, sizeof rec);
	int e = file_sum(fd, &r.before);
	/* the record first (with no "after" yet): a change never lies on disk
	 * without what undoes it */
	if (e == 0)
		e = record_write(rec, &r);
	if (e) {
		et_tool_err("%s: cannot keep the record in %s (%s): not changed", real, rec, strerror(-e));
		close(fd);
		return ET_EXIT_BAD;
	}
	e = write_fields(fd, &r.p, g_H);
	if (e == 0)
		e = file_sum(fd, &r.after);
	if (e == 0)
		e = record_write(rec, &r);
	if (e) {
		int u = write_fields(fd, &r.p, 0);
		et_tool_err("%s: %s: %s", real, strerror(-e),
		            u == 0 ? "put back as it was" : "COULD NOT BE PUT BACK: run 'enormoustext align --undo' on it");
		if (u == 0)
			unlink(rec);
		close(fd);
		return ET_EXIT_BAD;
	}
	close(fd);
	printf("%s: aligned (%.1f MiB of text); prime it (or let the daemon) for huge text from its next "
	       "start; undo: enormoustext align --undo %s\n", real, (double)r.p.text / 1048576.0, real);
	return 0;
}

static int undo_one(const char *arg, bool dry)
{
	char real[PATH_MAX], rec[PATH_MAX + 64];
	if (!realpath(arg, real))
		snprintf(real, sizeof real, "%s", arg);
	record_path(real, rec, sizeof rec);
	struct record r;
	int e = record_read(rec, &r);
	if (e) {
		et_tool_err("%s: align changed nothing in it (no record in %s/aligned)", real, g_state);
		return ET_EXIT_BAD;
	}
	int fd;
	if (dry ? (fd = open(real, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) < 0 : open_rw(real, &fd) != 0) {
		if (dry)
			et_tool_err("%s: %s", real, strerror(errno));
		return ET_EXIT_BAD;
	}
	uint64_t now;
	if ((e = file_sum(fd, &now)) != 0) {
		et_tool_err("%s: %s", real, strerror(-e));
		close(fd);
		return ET_EXIT_BAD;
	}
	if (now == r.before) {
		printf("%s: as it was before align already (a package put it back?): record removed\n", real);
		if (!dry)
			unlink(rec);
		close(fd);
		return 0;
	}
	if (now != r.after) {
		et_tool_err("%s: changed since align (another version of it?): not changed; the record %s is kept",
		            real, rec);
		close(fd);
		return ET_EXIT_BAD;
	}
	if (dry) {
		printf("%s: would be put back as it was (dry run)\n", real);
		close(fd);
		return 0;
	}
	e = write_fields(fd, &r.p, 0);
	uint64_t back = 0;
	if (e == 0)
		e = file_sum(fd, &back);
	close(fd);
	if (e || back != r.before) {
		et_tool_err("%s: %s: the record %s is kept", real, e ? strerror(-e) : "not the bytes it had before align",
		            rec);
		return ET_EXIT_BAD;
	}
	unlink(rec);
	printf("%s: put back as it was before align, byte for byte\n", real);
	return 0;
}

static int list_all(void)
{
	char dir[PATH_MAX + 16];
	snprintf(dir, sizeof dir, "%s/aligned", g_state);
	DIR *d = opendir(dir);
	int n = 0;
	if (d) {
		struct dirent *de;
		while ((de = readdir(d))) {
			if (de->d_name[0] == '.')
				continue;
			char rec[PATH_MAX + 300];
			struct record r;
			snprintf(rec, sizeof rec, "%s/%s", dir, de->d_name);
			if (record_read(rec, &r) == 0) {
				printf("%s\n", r.path);
				n++;
			}
		}
		closedir(d);
	}
	if (!n)
		printf("none (no record in %s)\n", dir);
	return 0;
}

int et_cmd_align(int argc, char **argv)
{
	struct et_args a;
	et_args_init(&a, &spec, argc, argv);
	bool undo = false, dry = false, list = false;
	int c;
	while ((c = et_args_next(&a)) > 0) {
		switch (c) {
		case O_UNDO: undo = true; break;
		case O_DRY: dry = true; break;
		case O_LIST: list = true; break;
		case O_STATE: g_state = a.val; break;
		}
	}
	if (c < 0)
		return et_args_exit(c);
	if (list) {
		if (a.nops)
			return et_tool_usage("--list takes no FILE ('%s')", a.ops[0]);
		return list_all();
	}
	if (!a.nops)
		return et_tool_usage("give the FILE to %s", undo ? "put back" : "align");
	struct et_sysinfo si;
	et_sysinfo_read_pmd(&si, "/");
	g_H = si.pmd_size ? si.pmd_size : 2u << 20;
	int rc = 0;
	for (int i = 0; i < a.nops; i++) {
		int r = undo ? undo_one(a.ops[i], dry) : align_one(a.ops[i], dry);
		rc = rc ? rc : r;
	}
	return rc;
}
