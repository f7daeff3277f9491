/*
 * faultprog — the program the fault tests run preloaded: it does what the
 * library's passes react to, and prints only what it computed, so that a
 * run with libenormoustext (whatever fails underneath) can be compared
 * byte for byte with a plain run.
 *
 *   faultprog [--exit N] [--own-calls K] [--peak FILE] [--work MS] LIB
 *
 *   start-up  its own 8 MiB of text (the integration tests' generated
 *             functions, bigtext.h): every function called and checked,
 *             its text in memory compared with the file
 *   dlopen    LIB (a copy of libbigtext.so): the same for its functions
 *             and text; errno across the call
 *   thread    a thread that calls both objects' functions
 *   fork      a child that calls them too and exits with status 42 when
 *             its results are right (1 when not)
 *   signals   its own SIGUSR1 handler, installed with sigaction and raised
 *   fork+dlopen a second child, forked once the thread has been joined:
 *             it dlcloses LIB (unloading it there), dlopens it again, calls
 *             its functions and exits 43 when they are right (a child that
 *             hangs is killed by its own alarm after 20 s: "signal 14")
 *   own calls K rounds of its own mmap, madvise(MADV_NORMAL), munmap,
 *             open, read, close, prctl(PR_GET_NAME) (for the attribution
 *             checks of faultrun: none of them is the library's)
 *   exit      dlclose, then the invariants below, then exit N (default 0)
 *             when everything was right, 1 when something was not, 2 on
 *             bad usage; with --end-pthread-exit, the main thread ends
 *             with pthread_exit instead (status 0: the process ends when
 *             its last thread does).  --no-counts leaves out the thread
 *             and mapping counts (a deferred worker that lives, or swaps
 *             windows in, while they are taken changes both: documented).
 * The invariants, printed at the end (what a library that is invisible
 * leaves as the program would have had it):
 *   fd        the lowest free file descriptor (open /dev/null, its number)
 *   threads   the entries of /proc/self/task (its own thread joined: 1)
 *   mappings  the lines of /proc/self/maps after a little W^X toggling
 *             (8 pages: code written, every other page PROT_READ|PROT_EXEC
 *             then PROT_READ|PROT_WRITE again, twice), minus those before
 *             it (a difference: the library's own mappings are not the
 *             program's): +0 plainly
 *   signals   the disposition of every signal 1..64 as sigaction reports
 *             it (D default, I ignored, H a handler, - sigaction refused the
 *             number: glibc's 32 and 33); SIGPROF (27) on a line of its own
 *             (ENORMOUSTEXT_RECORD's timer fallback samples with a SIGPROF
 *             handler of its own: that line tells it apart); and the
 *             signals blocked in the main thread
 * They depend on nothing but the program: main first closes every
 * descriptor above 2 it inherited (as a daemon does with closefrom(3):
 * ctest, a shell or a wrapper may hand it others, which would move the
 * lowest free one between runs), so a descriptor the library keeps open
 * shows, and one the library would close or act on after that is the
 * program's.
 * --work MS: after the start-up checks, calls its functions over and over
 * until the process has used MS milliseconds of CPU time since it began (a
 * program at work while the library's deferral moves and primes its text:
 * the deferral's tick counts the thread's CPU time, so on a busy machine
 * the work lasts longer in wall time but the pass still comes within it),
 * then checks results and text again.
 * --peak FILE writes the VmPeak and VmSize lines of /proc/self/status to FILE at the
 * end (the address-space tests set their limits from it).
 *
 * Everything goes to stdout and nothing depends on addresses, pids or
 * huge pages.  It must never print anything on stderr.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <time.h>
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bigtext.h"

static int n_bad;

#define BAD(...) do { printf("faultprog: WRONG: " __VA_ARGS__); printf("\n"); n_bad++; } while (0)

struct sums {
	uint64_t exe, lib;
	unsigned wrong;
};

static const bt_fn *lib_table;
static unsigned lib_count;

static uint64_t run_table(const bt_fn *t, unsigned n, unsigned obj, unsigned *wrong)
{
	uint64_t sum = 0xcbf29ce484222325ull;

	for (unsigned i = 0; i < n; i++) {
		uint64_t x = bt_arg(obj, i), r = t[i](x);
		if (r != bt_expect(obj, i, x))
			(*wrong)++;
		sum = (sum ^ r) * 0x100000001B3ull;
	}
	return sum;
}

static struct sums compute(void)
{
	struct sums s = { 0, 0, 0 };

	s.exe = run_table(bt_exe_table, bt_exe_count, BT_OBJ_EXE, &s.wrong);
	if (lib_table)
		s.lib = run_table(lib_table, lib_count, BT_OBJ_LIB, &s.wrong);
	return s;
}

/* ---- text in memory == text in the file ----------------------------------- */

struct find {
	uintptr_t probe;
	int found;
	char path[4096];
	uintptr_t start[8];
	uint64_t off[8], filesz[8];
	int n;
};

static int find_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct find *f = data;
	int hit = 0;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t a = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && f->probe >= a && f->probe < a + ph->p_memsz)
			hit = 1;
	}
	if (!hit || f->found++)
		return 0;
	snprintf(f->path, sizeof f->path, "%s", info->dlpi_name && info->dlpi_name[0] ? info->dlpi_name : "/proc/self/exe");
	for (int i = 0; i < info->dlpi_phnum && f->n < 8; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		f->start[f->n] = info->dlpi_addr + ph->p_vaddr;
		f->off[f->n] = ph->p_offset;
		f->filesz[f->n] = ph->p_filesz;
		f->n++;
	}
	return 0;
}

static void check_text(const char *role, const void *probe)
{
	static unsigned char buf[1 << 20];
	struct find f;
	uint64_t total = 0;
	int fd;

	memset(&f, 0, sizeof f);
	f.probe = (uintptr_t)probe;
	dl_iterate_phdr(find_cb, &f);
	if (f.found != 1 || f.n == 0) {
		BAD("%s: its executable segments were not found (%d objects matched)", role, f.found);
		return;
	}
	fd = open(f.path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		BAD("%s: cannot open its file: %s", role, strerror(errno));
		return;
	}
	for (int i = 0; i < f.n; i++) {
		uint64_t done = 0;

		while (done < f.filesz[i]) {
			size_t want = f.filesz[i] - done < sizeof buf ? (size_t)(f.filesz[i] - done) : sizeof buf;
			ssize_t n = pread(fd, buf, want, (off_t)(f.off[i] + done));
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				BAD("%s: cannot read its file: %s", role, n < 0 ? strerror(errno) : "short file");
				close(fd);
				return;
			}
			if (memcmp((const void *)(f.start[i] + done), buf, (size_t)n) != 0) {
				BAD("%s: text in memory differs from the file (segment %d, near file offset %#" PRIx64 ")",
				    role, i, f.off[i] + done);
				close(fd);
				return;
			}
			done += (uint64_t)n;
			total += (uint64_t)n;
		}
	}
	close(fd);
	printf("faultprog: %s: %" PRIu64 " bytes of text in %d segment%s identical to the file\n", role, total, f.n,
	       f.n == 1 ? "" : "s");
}

/* ---- the phases ------------------------------------------------------------- */

static void *thread_main(void *arg)
{
	*(struct sums *)arg = compute();
	return arg;
}

static volatile sig_atomic_t got_usr1;

static void on_usr1(int sig)
{
	(void)sig;
	got_usr1++;
}

static void own_calls(unsigned k)
{
	unsigned ok = 0;
	char buf[256], name[17];

	for (unsigned i = 0; i < k; i++) {
		void *p = mmap(NULL, 1 << 16, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		int good = p != MAP_FAILED;

		if (good) {
			memset(p, (int)i, 1 << 16);
			good &= madvise(p, 1 << 16, MADV_NORMAL) == 0;
			good &= munmap(p, 1 << 16) == 0;
		}
		int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
		good &= fd >= 0 && read(fd, buf, sizeof buf) > 0;
		if (fd >= 0)
			close(fd);
		good &= prctl(PR_GET_NAME, name, 0, 0, 0) == 0;
		ok += (unsigned)good;
	}
	printf("faultprog: own calls: %u of %u rounds succeeded\n", ok, k);
	if (ok != k)
		BAD("own calls: %u of %u rounds failed", k - ok, k);
}

/* ---- the invariants ------------------------------------------------------------ */

/* Lines of /proc/self/maps, read without allocating (a first malloc could
 * itself add a mapping between two counts). */
static long maps_count(void)
{
	static char buf[1 << 16];
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	long n = 0;
	ssize_t r;

	if (fd < 0)
		return -1;
	while ((r = read(fd, buf, sizeof buf)) != 0) {
		if (r < 0) {
			if (errno == EINTR)
				continue;
			n = -1;
			break;
		}
		for (ssize_t i = 0; i < r; i++)
			n += buf[i] == '\n';
	}
	close(fd);
	return n;
}

static void wx_toggles(void)
{
	long pg = sysconf(_SC_PAGESIZE);
	size_t len = 8 * (size_t)pg;
	unsigned char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int failed = 0;

	if (p == MAP_FAILED) {
		BAD("W^X toggles: mmap: %s", strerror(errno));
		return;
	}
	memset(p, 0xc3, len);   /* ret */
	long before = maps_count();
	for (int round = 0; round < 2; round++)
		for (int i = 0; i < 8; i += 2) {
			failed |= mprotect(p + (size_t)i * (size_t)pg, (size_t)pg, PROT_READ | PROT_EXEC) != 0;
			failed |= mprotect(p + (size_t)i * (size_t)pg, (size_t)pg, PROT_READ | PROT_WRITE) != 0;
			p[(size_t)i * (size_t)pg] = 0xc3;
		}
	long after = maps_count();
	munmap(p, len);
	printf("faultprog: W^X toggles: %s, mappings %+ld\n", failed ? "an mprotect FAILED" : "every mprotect succeeded",
	       before < 0 || after < 0 ? 999999L : after - before);
	if (failed)
		BAD("W^X toggles: an mprotect failed");
}

static int count_threads(void)
{
	DIR *d = opendir("/proc/self/task");
	int n = 0;

	if (!d)
		return -1;
	for (struct dirent *e; (e = readdir(d));)
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

static char disposition(int sig)
{
	struct sigaction old;

	if (sigaction(sig, NULL, &old) != 0)
		return '-';
	if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_DFL)
		return 'D';
	if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler == SIG_IGN)
		return 'I';
	return 'H';
}

static void signal_state(void)
{
	char d[65];
	sigset_t blocked;
	int n = 0;

	for (int sig = 1; sig <= 64; sig++)
		d[sig - 1] = sig == SIGPROF ? 'p' : disposition(sig);
	d[64] = '\0';
	printf("faultprog: signal dispositions 1..64 (p: SIGPROF, below): %s\n", d);
	printf("faultprog: SIGPROF: %c\n", disposition(SIGPROF));
	printf("faultprog: blocked in the main thread:");
	if (pthread_sigmask(SIG_BLOCK, NULL, &blocked) != 0) {
		printf(" (pthread_sigmask failed)\n");
		return;
	}
	for (int sig = 1; sig <= 64; sig++)
		if (sigismember(&blocked, sig) == 1) {
			printf(" %d", sig);
			n++;
		}
	printf("%s\n", n ? "" : " none");
}

/* A child that unloads LIB and loads it again: its first dlopen. */
static void fork_dlopen(void *h, const char *lib, const struct sums *ref)
{
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0) {
		BAD("fork (dlopen child): %s", strerror(errno));
		return;
	}
	if (pid == 0) {
		alarm(20);   /* the default disposition: killed by SIGALRM (14) */
		if (h)
			dlclose(h);
		lib_table = NULL;
		void *h2 = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
		const bt_fn *(*table_of)(unsigned *) = h2 ? (const bt_fn *(*)(unsigned *))dlsym(h2, "bt_lib_table") : NULL;
		if (!table_of)
			_exit(3);
		lib_table = table_of(&lib_count);
		struct sums sc = compute();
		_exit(sc.exe == ref->exe && sc.lib == ref->lib && !sc.wrong ? 43 : 1);
	}
	int wst = 0;
	while (waitpid(pid, &wst, 0) < 0 && errno == EINTR)
		;
	if (WIFEXITED(wst))
		printf("faultprog: fork+dlopen: the child exited %d\n", WEXITSTATUS(wst));
	else
		printf("faultprog: fork+dlopen: the child was killed by signal %d\n", WTERMSIG(wst));
	if (!WIFEXITED(wst) || WEXITSTATUS(wst) != 43)
		BAD("fork+dlopen: the child did not exit 43");
}

int main(int argc, char **argv)
{
	int exit_status = 0, i;
	bool end_pthread_exit = false, no_counts = false;
	unsigned own = 0;
	long work_ms = 0;
	const char *lib = NULL, *peak = NULL;

	/* closefrom(3), where glibc may lack it: close_range, else one by one */
	if (syscall(SYS_close_range, 3, ~0u, 0) != 0)
		for (int fd = 3; fd < 1024; fd++)
			close(fd);
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--exit") && i + 1 < argc)
			exit_status = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--own-calls") && i + 1 < argc)
			own = (unsigned)strtoul(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--end-pthread-exit"))
			end_pthread_exit = true;
		else if (!strcmp(argv[i], "--no-counts"))
			no_counts = true;
		else if (!strcmp(argv[i], "--peak") && i + 1 < argc)
			peak = argv[++i];
		else if (!strcmp(argv[i], "--work") && i + 1 < argc)
			work_ms = atol(argv[++i]);
		else if (argv[i][0] != '-' && !lib)
			lib = argv[i];
		else {
			printf("usage: faultprog [--exit N] [--own-calls K] [--peak FILE] [--work MS] LIB\n");
			return 2;
		}
	}
	if (!lib) {
		printf("usage: faultprog [--exit N] [--own-calls K] [--peak FILE] [--work MS] LIB\n");
		return 2;
	}

	/* start-up: the library's constructor has run */
	struct sums s0 = compute();
	printf("faultprog: exe: %u functions, %u wrong, checksum %016" PRIx64 "\n", bt_exe_count, s0.wrong, s0.exe);
	if (s0.wrong)
		BAD("exe: %u results wrong", s0.wrong);
	check_text("exe", (const void *)bt_exe_table[0]);
	if (work_ms > 0) {
		struct timespec t0, t;
		unsigned rounds = 0, off = 0;
		/* CPU time from the process's start (t0 = 0): the deferral's
		 * deadline and its tick are measured from there */
		t0.tv_sec = 0;
		t0.tv_nsec = 0;
		do {
			struct sums sw = compute();
			rounds++;
			if (sw.wrong || sw.exe != s0.exe)
				off++;
			clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
		} while ((t.tv_sec - t0.tv_sec) * 1000L + (t.tv_nsec - t0.tv_nsec) / 1000000L < work_ms);
		printf("faultprog: worked %ld ms: %s\n", work_ms, off ? "results DIFFERENT" : "every round's results the same");
		if (off)
			BAD("work: %u of %u rounds' results differ", off, rounds);
		check_text("exe", (const void *)bt_exe_table[0]);
	}

	/* dlopen */
	errno = 0;
	void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	int e = errno;
	if (!h) {
		BAD("dlopen %s: %s", lib, dlerror());
	} else {
		const bt_fn *(*table_of)(unsigned *) = (const bt_fn *(*)(unsigned *))dlsym(h, "bt_lib_table");
		if (!table_of)
			BAD("no bt_lib_table in %s", lib);
		else
			lib_table = table_of(&lib_count);
	}
	printf("faultprog: dlopen: %s, errno after it %d\n", h ? "loaded" : "failed", e);
	struct sums s1 = compute();
	printf("faultprog: lib: %u functions, %u wrong, checksum %016" PRIx64 "\n", lib_count, s1.wrong, s1.lib);
	if (s1.wrong || !lib_count)
		BAD("lib: %u of %u results wrong", s1.wrong, lib_count);
	if (lib_table)
		check_text("lib", (const void *)lib_table[0]);

	/* a thread */
	struct sums st;
	pthread_t th;
	errno = 0;
	int rc = pthread_create(&th, NULL, thread_main, &st);
	e = errno;
	if (rc != 0) {
		BAD("pthread_create: %s", strerror(rc));
	} else {
		pthread_join(th, NULL);
		int same = st.exe == s1.exe && st.lib == s1.lib && !st.wrong;
		printf("faultprog: thread: results %s, errno after pthread_create %d\n", same ? "the same" : "DIFFERENT", e);
		if (!same)
			BAD("thread: results differ from the main thread's");
	}

	/* fork */
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0) {
		BAD("fork: %s", strerror(errno));
	} else if (pid == 0) {
		struct sums sc = compute();
		exit(sc.exe == s1.exe && sc.lib == s1.lib && !sc.wrong ? 42 : 1);
	} else {
		int wst = 0;
		while (waitpid(pid, &wst, 0) < 0 && errno == EINTR)
			;
		if (WIFEXITED(wst))
			printf("faultprog: fork: the child exited %d\n", WEXITSTATUS(wst));
		else
			printf("faultprog: fork: the child was killed by signal %d\n", WTERMSIG(wst));
		if (!WIFEXITED(wst) || WEXITSTATUS(wst) != 42)
			BAD("fork: the child did not exit 42");
	}

	/* a child's first dlopen (no thread of ours alive: none holds a lock) */
	fork_dlopen(h, lib, &s1);

	/* the program's own signal handler */
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_usr1;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR1, &sa, NULL) != 0 || raise(SIGUSR1) != 0)
		BAD("sigaction/raise: %s", strerror(errno));
	printf("faultprog: SIGUSR1 handled %d time%s\n", (int)got_usr1, got_usr1 == 1 ? "" : "s");

	if (own)
		own_calls(own);

	if (h) {
		lib_table = NULL;
		errno = 0;
		rc = dlclose(h);
		printf("faultprog: dlclose: %d, errno after it %d\n", rc, errno);
	}
	/* the invariants */
	if (!no_counts) {
		wx_toggles();
		printf("faultprog: threads: %d\n", count_threads());
	}
	signal_state();
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	printf("faultprog: lowest free fd: %d\n", fd);
	if (fd >= 0)
		close(fd);
	printf("faultprog: %s\n", n_bad ? "WRONG" : "all right");
	fflush(stdout);
	if (peak) {
		FILE *in = fopen("/proc/self/status", "re"), *out = fopen(peak, "we");
		char line[256];
		while (in && out && fgets(line, sizeof line, in))
			if (!strncmp(line, "VmPeak:", 7) || !strncmp(line, "VmSize:", 7))
				fputs(line, out);
		if (in)
			fclose(in);
		if (out)
			fclose(out);
	}
	if (end_pthread_exit && !n_bad) {
		/* the main thread ends, the process with it when it was the
		 * last (exit status 0), as without the library */
		pthread_exit(NULL);
	}
	return n_bad ? 1 : exit_status;
}
