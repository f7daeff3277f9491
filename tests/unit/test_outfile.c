/*
 * test_outfile.c — writing a file the user named (outfile.c, et_out_*), and
 * the perf map that goes through it (perfmap.c): what is at the path
 * decides how it is written — nothing or a regular file: beside and renamed
 * in (0600 new, mode kept); a character device or FIFO: as it is; a link:
 * followed; the rest refused — and errno is left as it was.
 *
 * fstat is wrapped here (see below) to tell et_perfmap_symbols a file is
 * longer than it is, as a file cut short after it was opened would be.
 */
#include "unit_util.h"

#include "core/elfsyms.h"
#include "core/log.h"
#include "core/outfile.h"
#include "core/run.h"
#include "runtime/report.h"

#include <dlfcn.h>
#include <link.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>

TestSuite(outfile, .timeout = 30, .fini = ut_cleanup);
TestSuite(perfmap, .timeout = 30, .fini = ut_cleanup);

/* ---------------------------------------------------------------- helpers */

/* The file of this inode "is" lie_size bytes long, whatever it holds. */
static ino_t g_lie_ino;
static off_t g_lie_size;

int fstat(int fd, struct stat *st)
{
	int r = fstatat(fd, "", st, AT_EMPTY_PATH);
	if (r == 0 && g_lie_ino && st->st_ino == g_lie_ino)
		st->st_size = g_lie_size;
	return r;
}

static void path_in(char *out, const char *dir, const char *rel)
{
	int n = snprintf(out, PATH_MAX, "%s/%s", dir, rel);
	cr_assert(n > 0 && n < PATH_MAX);
}

/* Open, write text, commit; errno must come back as it was each time. */
static int write_all(const char *path, unsigned flags, const char *text, struct et_out *o)
{
	errno = 4242;
	int e = et_out_open(o, path, flags);
	cr_assert_eq(errno, 4242, "et_out_open changed errno to %d", errno);
	if (e)
		return e;
	e = et_out_write(o, text, strlen(text));
	cr_assert_eq(errno, 4242, "et_out_write changed errno to %d", errno);
	if (e) {
		et_out_abort(o);
		return e;
	}
	e = et_out_commit(o);
	cr_assert_eq(errno, 4242, "et_out_commit changed errno to %d", errno);
	return e;
}

static void expect_content(const char *path, const char *want)
{
	char *got = ut_read(path, NULL);
	cr_assert_not_null(got, "cannot read %s", path);
	cr_expect_str_eq(got, want, "%s holds '%s', not '%s'", path, got, want);
	free(got);
}

static mode_t mode_of(const char *path)
{
	struct stat st;
	cr_assert_eq(lstat(path, &st), 0, "lstat(%s): %s", path, strerror(errno));
	return st.st_mode;
}

/* ------------------------------------------------------------- the rules */

Test(outfile, new_file_is_0600_and_whole)
{
	char dir[PATH_MAX], p[PATH_MAX];
	ut_tmpdir(dir, sizeof dir);
	path_in(p, dir, "new");
	umask(022);
	struct et_out o;
	cr_assert_eq(write_all(p, 0, "hello\n", &o), 0);
	cr_expect_eq(mode_of(p) & 07777, 0600, "mode %o", mode_of(p) & 07777);
	cr_expect(S_ISREG(mode_of(p)));
	expect_content(p, "hello\n");
	cr_expect_eq(ut_count_entries(dir), 1, "a temporary was left beside it");
	ut_rmtree(dir);
}

Test(outfile, replaced_file_keeps_its_mode)
{
	char dir[PATH_MAX], p[PATH_MAX];
	ut_tmpdir(dir, sizeof dir);
	ut_write(dir, "f", "old content\n");
	path_in(p, dir, "f");
	cr_assert_eq(chmod(p, 0604), 0);
	struct stat before;
	cr_assert_eq(stat(p, &before), 0);
	struct et_out o;
	cr_assert_eq(write_all(p, 0, "new\n", &o), 0);
	expect_content(p, "new\n");
	cr_expect_eq(mode_of(p) & 07777, 0604, "mode %o", mode_of(p) & 07777);
	struct stat after;
	cr_assert_eq(stat(p, &after), 0);
	cr_expect_neq(after.st_ino, before.st_ino, "written in place, not renamed over");
	cr_expect_eq(ut_count_entries(dir), 1);
	ut_rmtree(dir);
}

Test(outfile, abort_leaves_the_old_file)
{
	char dir[PATH_MAX], p[PATH_MAX];
	ut_tmpdir(dir, sizeof dir);
	ut_write(dir, "f", "old\n");
	path_in(p, dir, "f");
	struct et_out o;
	cr_assert_eq(et_out_open(&o, p, 0), 0);
	cr_expect_eq(o.mode, ET_OUT_REPLACE);
	cr_assert_eq(et_out_write(&o, "half", 4), 0);
	cr_expect_eq(ut_count_entries(dir), 2, "no temporary beside the file while writing");
	et_out_abort(&o);
	expect_content(p, "old\n");
	cr_expect_eq(ut_count_entries(dir), 1, "the temporary was not removed");
	ut_rmtree(dir);
}

Test(outfile, keep_starts_from_the_old_content)
{
	char dir[PATH_MAX], p[PATH_MAX];
	ut_tmpdir(dir, sizeof dir);
	ut_write(dir, "f", "first\n");
	path_in(p, dir, "f");
	struct et_out o;
	cr_assert_eq(write_all(p, ET_OUT_KEEP, "second\n", &o), 0);
	expect_content(p, "first\nsecond\n");
	ut_rmtree(dir);
}

Test(outfile, symlink_chain_followed_links_kept)
{
	char dir[PATH_MAX], real[PATH_MAX], mid[PATH_MAX], link[PATH_MAX], got[PATH_MAX];
	ut_tmpdir(dir, sizeof dir);
	ut_write(dir, "sub/real", "old\n");
	path_in(real, dir, "sub/real");
	path_in(mid, dir, "sub/mid");
	path_in(link, dir, "link");
	cr_assert_eq(symlink("real", mid), 0);         /* relative: against sub/ */
	cr_assert_eq(symlink(mid, link), 0);           /* absolute */
	struct et_out o;
	cr_assert_eq(write_all(link, 0, "through\n", &o), 0);
	cr_expect_str_eq(o.path, real, "written to %s", o.path);
	expect_content(real, "through\n");
	cr_expect(S_ISLNK(mode_of(link)) && S_ISLNK(mode_of(mid)), "a link was replaced");
	ssize_t n = readlink(link, got, sizeof got - 1);
	cr_assert(n > 0);
	got[n] = '\0';
	cr_expect_str_eq(got, mid);
	cr_expect_eq(ut_count_entries(dir), 2);
	ut_rmtree(dir);
}

Test(outfile, dangling_link_creates_its_target)
{
	char dir[PATH_MAX], link[PATH_MAX], target[PATH_MAX];
	ut_tmpdir(dir, sizeof dir);
	path_in(link, dir, "link");
	path_in(target, dir, "made");
	cr_assert_eq(symlink("made", link), 0);
	struct et_out o;
	cr_assert_eq(write_all(link, 0, "x\n", &o), 0);
	expect_content(target, "x\n");
	cr_expect(S_ISLNK(mode_of(link)));
	ut_rmtree(dir);
}

Test(outfile, link_loop_is_eloop_and_writes_nothing)
{
	char dir[PATH_MAX], a[PATH_MAX], b[PATH_MAX];
	ut_tmpdir(dir, sizeof dir);
	path_in(a, dir, "a");
	path_in(b, dir, "b");
	cr_assert_eq(symlink("b", a), 0);
	cr_assert_eq(symlink("a", b), 0);
	struct et_out o;
	cr_expect_eq(write_all(a, 0, "x", &o), -ELOOP);
	cr_expect_eq(ut_count_entries(dir), 2);
	ut_rmtree(dir);
}

Test(outfile, nofollow_leaves_a_link_alone)
{
	char dir[PATH_MAX], link[PATH_MAX], victim[PATH_MAX], why[160];
	ut_tmpdir(dir, sizeof dir);
	ut_write(dir, "victim", "mine\n");
	path_in(victim, dir, "victim");
	path_in(link, dir, "link");
	cr_assert_eq(symlink(victim, link), 0);
	struct et_out o;
	cr_expect_eq(write_all(link, ET_OUT_NOFOLLOW | ET_OUT_FILES_ONLY, "x", &o), -ELOOP);
	cr_assert_not_null(et_out_why(&o, why, sizeof why));
	cr_expect(strstr(why, "a symbolic link") != NULL, "why: %s", why);
	expect_content(victim, "mine\n");
	cr_expect(S_ISLNK(mode_of(link)));
	ut_rmtree(dir);
}

Test(outfile, directory_refused_with_its_type)
{
	char dir[PATH_MAX], d[PATH_MAX], why[160];
	ut_tmpdir(dir, sizeof dir);
	path_in(d, dir, "d");
	cr_assert_eq(mkdir(d, 0755), 0);
	struct et_out o;
	cr_expect_eq(write_all(d, 0, "x", &o), -EISDIR);
	cr_assert_not_null(et_out_why(&o, why, sizeof why));
	cr_expect(strncmp(why, "a directory", 11) == 0, "why: %s", why);
	cr_expect_eq(ut_count_entries(d), 0);
	cr_expect_eq(ut_count_entries(dir), 1);
	ut_rmtree(dir);
}

Test(outfile, socket_refused_with_its_type)
{
	char dir[PATH_MAX], why[160];
	ut_tmpdir(dir, sizeof dir);
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int n = snprintf(sa.sun_path, sizeof sa.sun_path, "%s/s", dir);
	cr_assert(n > 0 && (size_t)n < sizeof sa.sun_path);
	int s = socket(AF_UNIX, SOCK_STREAM, 0);
	cr_assert(s >= 0);
	cr_assert_eq(bind(s, (struct sockaddr *)&sa, sizeof sa), 0, "bind: %s", strerror(errno));
	struct et_out o;
	cr_expect_eq(write_all(sa.sun_path, 0, "x", &o), -EINVAL);
	cr_assert_not_null(et_out_why(&o, why, sizeof why));
	cr_expect(strncmp(why, "a socket", 8) == 0, "why: %s", why);
	cr_expect(S_ISSOCK(mode_of(sa.sun_path)));
	close(s);
	ut_rmtree(dir);
}

Test(outfile, character_device_written_as_it_is)
{
	struct et_out o;
	cr_assert_eq(write_all("/dev/null", 0, "into the void\n", &o), 0);
	cr_expect(S_ISCHR(mode_of("/dev/null")));
	/* /dev/full: ENOSPC, an error */
	cr_expect_eq(write_all("/dev/full", 0, "x", &o), -ENOSPC);
	cr_expect(S_ISCHR(mode_of("/dev/full")));
}

Test(outfile, files_only_leaves_a_fifo_alone)
{
	char dir[PATH_MAX], f[PATH_MAX], why[160];
	ut_tmpdir(dir, sizeof dir);
	path_in(f, dir, "f");
	cr_assert_eq(mkfifo(f, 0600), 0);
	struct et_out o;
	cr_expect_eq(write_all(f, ET_OUT_FILES_ONLY, "x", &o), -EINVAL);
	cr_assert_not_null(et_out_why(&o, why, sizeof why));
	cr_expect(strncmp(why, "a FIFO", 6) == 0, "why: %s", why);
	cr_expect(S_ISFIFO(mode_of(f)));
	cr_expect_eq(ut_count_entries(dir), 1);
	ut_rmtree(dir);
}

Test(outfile, fifo_without_reader_is_skipped_not_blocked)
{
	char dir[PATH_MAX], f[PATH_MAX];
	ut_tmpdir(dir, sizeof dir);
	path_in(f, dir, "f");
	cr_assert_eq(mkfifo(f, 0600), 0);
	struct et_out o;
	cr_expect_eq(write_all(f, 0, "x", &o), -ENXIO);
	cr_expect(o.skipped);
	cr_expect(S_ISFIFO(mode_of(f)));
	cr_expect_eq(ut_count_entries(dir), 1);
	ut_rmtree(dir);
}

Test(outfile, fifo_with_reader_gets_everything)
{
	char dir[PATH_MAX], f[PATH_MAX];
	ut_tmpdir(dir, sizeof dir);
	path_in(f, dir, "f");
	cr_assert_eq(mkfifo(f, 0600), 0);
	int rd = open(f, O_RDONLY | O_NONBLOCK);
	cr_assert(rd >= 0);
	/* more than a pipe holds: the writer blocks (O_NONBLOCK is for the
	 * open only) while a child reads it all */
	enum { N = 1 << 20 };
	pid_t child = fork();
	cr_assert(child >= 0);
	if (child == 0) {
		static char buf[65536];
		size_t total = 0;
		for (;;) {
			struct pollfd p = { rd, POLLIN, 0 };
			poll(&p, 1, 10000);
			ssize_t r = read(rd, buf, sizeof buf);
			if (r < 0 && errno == EAGAIN)
				continue;
			if (r <= 0)
				break;
			total += (size_t)r;
		}
		_exit(total == N ? 0 : 1);
	}
	close(rd);
	char *text = malloc(N + 1);
	cr_assert_not_null(text);
	memset(text, 'x', N);
	text[N] = '\0';
	struct et_out o;
	cr_expect_eq(write_all(f, 0, text, &o), 0);
	int st;
	cr_assert_eq(waitpid(child, &st, 0), child);
	cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the reader did not get all %d bytes", N);
	cr_expect(S_ISFIFO(mode_of(f)));
	free(text);
	ut_rmtree(dir);
}

Test(outfile, reader_leaving_gives_epipe_not_sigpipe)
{
	char dir[PATH_MAX], f[PATH_MAX];
	ut_tmpdir(dir, sizeof dir);
	path_in(f, dir, "f");
	cr_assert_eq(mkfifo(f, 0600), 0);
	int rd = open(f, O_RDONLY | O_NONBLOCK);
	cr_assert(rd >= 0);
	struct et_out o;
	cr_assert_eq(et_out_open(&o, f, 0), 0);
	cr_expect_eq(o.mode, ET_OUT_DIRECT);
	close(rd);
	/* SIGPIPE's default would end this process */
	cr_expect_eq(et_out_write(&o, "x", 1), -EPIPE);
	cr_expect_eq(et_out_commit(&o), -EPIPE);
	sigset_t pend;
	sigpending(&pend);
	cr_expect_eq(sigismember(&pend, SIGPIPE), 0, "a SIGPIPE is left pending");
	ut_rmtree(dir);
}

Test(outfile, missing_directory_creates_nothing)
{
	char dir[PATH_MAX], p[PATH_MAX];
	ut_tmpdir(dir, sizeof dir);
	path_in(p, dir, "no/such/file");
	struct et_out o;
	cr_expect_eq(write_all(p, 0, "x", &o), -ENOENT);
	cr_expect_null(et_out_why(&o, (char[8]){ 0 }, 8), "errno is the reason");
	cr_expect_eq(ut_count_entries(dir), 0);
	ut_rmtree(dir);
}

Test(outfile, long_name_gets_a_temporary_that_fits)
{
	char dir[PATH_MAX], p[PATH_MAX], name[256];
	ut_tmpdir(dir, sizeof dir);
	memset(name, 'n', 255);
	name[255] = '\0';                  /* NAME_MAX: no room for a suffix */
	path_in(p, dir, name);
	struct et_out o;
	cr_assert_eq(write_all(p, 0, "long\n", &o), 0);
	expect_content(p, "long\n");
	cr_expect_eq(ut_count_entries(dir), 1);
	ut_rmtree(dir);
}

/* ---------------------------------------------------------------- perfmap */

/* Two functions a page each, in different pages: windows of 4 KiB each. */
__attribute__((noinline, used, aligned(4096))) static int pm_first(int x) { return x * 3 + 1; }
__attribute__((noinline, used, aligned(4096))) static int pm_second(int x) { return x * 5 + 2; }

static int base_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	*(uint64_t *)data = info->dlpi_addr;
	return 1;   /* the first is the program */
}

static uint64_t page_of(const void *fn)
{
	return (uint64_t)(uintptr_t)fn & ~(uint64_t)4095;
}

/* A pass as summarise() leaves it: the object's first window a padded one
 * that could not be had (left out of o->nwindows), then the moved windows
 * given. */
struct pm_fixture {
	struct et_run run;
	struct et_object obj;
	struct et_window wins[4];
};

static void pm_make(struct pm_fixture *f, const void *const *fns, size_t nfns)
{
	memset(f, 0, sizeof *f);
	f->run.si.pmd_size = 4096;
	f->run.objs = &f->obj;
	f->run.nobjs = 1;
	f->run.wins = f->wins;
	ssize_t n = readlink("/proc/self/exe", f->obj.path, sizeof f->obj.path - 1);
	cr_assert(n > 0);
	f->obj.path[n] = '\0';
	dl_iterate_phdr(base_cb, &f->obj.base);
	f->wins[0] = (struct et_window){ .addr = page_of((const void *)pm_first) - 4096 * 16, .pad = true,
	                                 .reason = ET_R_PAD_NOT_FREE };
	for (size_t i = 0; i < nfns; i++)
		f->wins[1 + i] = (struct et_window){ .addr = page_of(fns[i]), .candidate = true, .remapped = true,
		                                     .huge = true };
	f->run.nwins = 1 + nfns;
	f->obj.nwindows = (uint32_t)nfns;      /* the padded window is not counted */
	f->obj.remapped_bytes = nfns * 4096;
}

static char *pm_map(char *path)
{
	snprintf(path, 64, "/tmp/perf-%ld.map", (long)getpid());
	return ut_read(path, NULL);
}

Test(perfmap, every_moved_window_is_in_the_map)
{
	cr_assert_neq(page_of((const void *)pm_first), page_of((const void *)pm_second));
	const void *fns[] = { (const void *)pm_first, (const void *)pm_second };
	umask(022);
	struct pm_fixture f;
	pm_make(&f, fns, 2);
	char path[64];
	snprintf(path, sizeof path, "/tmp/perf-%ld.map", (long)getpid());
	unlink(path);
	int n = et_perfmap_write(&f.run);
	char *map = pm_map(path);
	cr_assert_not_null(map, "no %s written", path);
	cr_expect(strstr(map, " pm_first\n") != NULL, "pm_first not in the map:\n%s", map);
	cr_expect(strstr(map, " pm_second\n") != NULL,
	          "pm_second, in the last moved window, not in the map:\n%s", map);
	cr_expect_geq(n, 2);
	cr_expect_eq(mode_of(path) & 07777, 0600, "mode %o", mode_of(path) & 07777);
	free(map);
	unlink(path);
	(void)pm_first(1);
	(void)pm_second(1);
}

Test(perfmap, a_later_pass_adds_a_stale_map_is_replaced)
{
	char path[64];
	snprintf(path, sizeof path, "/tmp/perf-%ld.map", (long)getpid());
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	cr_assert(fd >= 0);
	cr_assert_eq(write(fd, "1 1 stale_entry\n", 16), 16);
	close(fd);
	struct pm_fixture f;
	const void *a[] = { (const void *)pm_first }, *b[] = { (const void *)pm_second };
	pm_make(&f, a, 1);
	et_perfmap_write(&f.run);
	pm_make(&f, b, 1);
	et_perfmap_write(&f.run);
	char *map = pm_map(path);
	cr_assert_not_null(map);
	cr_expect_null(strstr(map, "stale_entry"), "the stale map of an earlier process was kept");
	cr_expect(strstr(map, " pm_first\n") && strstr(map, " pm_second\n"),
	          "the second pass did not add to the first's map:\n%s", map);
	free(map);
	unlink(path);
}

Test(perfmap, fifo_at_the_map_name_left_alone)
{
	char path[64];
	snprintf(path, sizeof path, "/tmp/perf-%ld.map", (long)getpid());
	unlink(path);
	cr_assert_eq(mkfifo(path, 0600), 0);
	struct pm_fixture f;
	const void *a[] = { (const void *)pm_first };
	pm_make(&f, a, 1);
	et_log_setup(0, true);                 /* its warning is not the test's output */
	cr_expect_eq(et_perfmap_write(&f.run), 0);
	cr_expect(S_ISFIFO(mode_of(path)));
	unlink(path);
}

static size_t symbols_of(const char *file, char *out_path)
{
	struct et_out o;
	cr_assert_eq(et_out_open(&o, out_path, 0), 0);
	uint64_t all[2] = { 0, UINT64_MAX };
	size_t n = et_perfmap_symbols(&o, file, 0, all, 1);
	cr_assert_eq(et_out_commit(&o), 0);
	return n;
}

Test(perfmap, symbols_of_a_fifo_return_at_once)
{
	char dir[PATH_MAX], f[PATH_MAX], out[PATH_MAX];
	ut_tmpdir(dir, sizeof dir);
	path_in(f, dir, "fifo");
	path_in(out, dir, "out");
	cr_assert_eq(mkfifo(f, 0600), 0);
	/* no writer ever comes: a blocking open would hang here */
	cr_expect_eq(symbols_of(f, out), 0);
	cr_expect_eq(symbols_of(dir, out), 0);
	cr_expect_eq(symbols_of("/dev/zero", out), 0);
	ut_rmtree(dir);
}

Test(perfmap, symbols_of_a_file_cut_short_no_sigbus)
{
	char dir[PATH_MAX], copy[PATH_MAX], out[PATH_MAX];
	ut_tmpdir(dir, sizeof dir);
	path_in(copy, dir, "exe");
	path_in(out, dir, "out");
	size_t len = 0;
	char *exe = ut_read("/proc/self/exe", &len);
	cr_assert_not_null(exe);
	ut_write_n(dir, "exe", exe, len);
	free(exe);
	cr_assert_gt(symbols_of(copy, out), 0, "no function found in the whole file");
	/* cut to a quarter: what fstat says stays the whole size, as for a file
	 * cut short after it was opened (a mapping of it would fault) */
	struct stat st;
	cr_assert_eq(stat(copy, &st), 0);
	cr_assert_eq(truncate(copy, (off_t)len / 4), 0);
	g_lie_ino = st.st_ino;
	g_lie_size = (off_t)len;
	size_t n = symbols_of(copy, out);
	g_lie_ino = 0;
	cr_expect_eq(n, 0, "%zu functions from a file whose symbol table is gone", n);
	ut_rmtree(dir);
}
