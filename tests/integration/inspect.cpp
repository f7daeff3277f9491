/*
 * inspect.cpp — tools that inspect code keep working on moved text.
 *
 * Four functions, level_a .. level_d, each aligned to 2 MiB and longer than
 * 2 MiB, so that each starts a whole window of its own: with the library,
 * their code runs from moved (anonymous, huge) copies.
 *
 *   inspect            C++ exceptions thrown in level_d and caught in main
 *                      through the moved frames; backtrace() + dladdr and
 *                      libunwind's unw_backtrace + dladdr from level_d name
 *                      level_d, level_c, level_b, level_a in order; checks
 *                      (smaps) that those frames really are moved and huge
 *   inspect --perfmap  also: /tmp/perf-PID.map names each level_ function at
 *                      its address (run with ENORMOUSTEXT_PERFMAP=1)
 *   inspect --spin S   loop in the level_ functions for S seconds (for perf
 *                      and gdb), after printing "ready PID"
 *   inspect --spin-thread S
 *                      the same loop in a second thread, the main thread
 *                      waiting for it (for the sampling of every thread)
 *   inspect --file     the windows are moved zero-copy (file-backed, huge
 *                      from the page cache): checks FilePmdMapped instead,
 *                      and that libunwind's unw_get_proc_name names the
 *                      frames (it reads names from the file that
 *                      /proc/PID/maps shows, which anonymous copies lack)
 * Exit 0 pass, 1 fail.
 */
#include <dlfcn.h>
#include <execinfo.h>
#define UNW_LOCAL_ONLY   /* this process only: the _UL* functions of libunwind.so */
#include <libunwind.h>
#include <pthread.h>
#include <stdexcept>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <unistd.h>

#include "it_text.h"

#define BIG extern "C" __attribute__((noinline, aligned(2097152), visibility("default")))
/* 2.1 MiB of never-executed bytes inside the function: it spans a window. */
#define PAD __asm__ volatile("jmp 1f\n.skip 2200000, 0xcc\n1:")

static int failures;
static volatile int spin_mode;   /* --spin: level_d works instead of tracing */
static std::string trace_backtrace, trace_unwind, trace_procname;
static int file_mode;            /* --file: zero-copy windows expected */

static void fail(const char *what)
{
	std::printf("inspect: FAIL: %s\n", what);
	failures++;
}

static std::string names_of(void **ips, int n)
{
	std::string s;
	for (int i = 0; i < n; i++) {
		Dl_info di;
		if (dladdr(ips[i], &di) && di.dli_sname && !std::strncmp(di.dli_sname, "level_", 6)) {
			s += di.dli_sname;
			s += ' ';
		}
	}
	return s;
}

extern "C" __attribute__((noinline)) int take_traces(int x)
{
	void *ips[64];
	trace_backtrace = names_of(ips, backtrace(ips, 64));
	trace_unwind = names_of(ips, unw_backtrace(ips, 64));
	/* libunwind's own names for the frames */
	unw_context_t uc;
	unw_cursor_t cur;
	trace_procname.clear();
	if (unw_getcontext(&uc) == 0 && unw_init_local(&cur, &uc) == 0) {
		int depth = 0;
		while (unw_step(&cur) > 0 && depth++ < 64) {
			char name[256];
			unw_word_t off;
			if (unw_get_proc_name(&cur, name, sizeof name, &off) == 0 &&
			    !std::strncmp(name, "level_", 6)) {
				trace_procname += name;
				trace_procname += ' ';
			}
		}
	}
	return x;
}

BIG int level_d(int x)
{
	PAD;
	if (x < 0)
		throw std::runtime_error("thrown in level_d");
	if (spin_mode) {
		unsigned h = (unsigned)x;
		for (int i = 0; i < 2000; i++)
			h = h * 2654435761u + (unsigned)i;
		return (int)(h & 1) + x * 5;
	}
	return take_traces(x) * 5;
}

BIG int level_c(int x)
{
	PAD;
	return level_d(x) + 3;
}

BIG int level_b(int x)
{
	PAD;
	return level_c(x) * 2;
}

BIG int level_a(int x)
{
	PAD;
	return level_b(x) + 1;
}

/* The last whole window is followed by more text, so level_a's is whole. */
BIG int level_end(int x)
{
	PAD;
	return x;
}

static void check_moved(void)
{
	uint64_t H = it_pmd_size();
	const void *fns[] = { (void *)level_a, (void *)level_b, (void *)level_c, (void *)level_d };
	for (const void *f : fns) {
		struct it_huge r;
		uintptr_t a = (uintptr_t)f;
		it_huge_of(a, a + H, H, &r);
		Dl_info di;
		dladdr(f, &di);
		std::printf("inspect: %s at %p: window %s (anon huge %llu, anonymous r-x %llu, file huge %llu)\n",
		            di.dli_sname ? di.dli_sname : "?", f,
		            r.anon >= H || r.file >= H ? "moved, huge" : "NOT moved", (unsigned long long)r.anon,
		            (unsigned long long)r.anon_rx, (unsigned long long)r.file);
		if (file_mode && r.file < H)
			fail("a level_ function is not in a zero-copy huge window (FilePmdMapped)");
		if (!file_mode && (r.anon < H || r.anon_rx < H))
			fail("a level_ function is not in a moved huge window (is the library loaded?)");
	}
}

static void check_perfmap(void)
{
	char path[64];
	std::snprintf(path, sizeof path, "/tmp/perf-%ld.map", (long)getpid());
	FILE *f = std::fopen(path, "r");
	if (!f) {
		fail("no /tmp/perf-PID.map (ENORMOUSTEXT_PERFMAP=1?)");
		return;
	}
	const char *want[] = { "level_a", "level_b", "level_c", "level_d" };
	void *addr[] = { (void *)level_a, (void *)level_b, (void *)level_c, (void *)level_d };
	int found = 0;
	char line[1024], name[512];
	unsigned long long start, size;
	while (std::fgets(line, sizeof line, f))
		if (std::sscanf(line, "%llx %llx %511s", &start, &size, name) == 3)
			for (int i = 0; i < 4; i++)
				if (!std::strcmp(name, want[i]) && start == (uintptr_t)addr[i] && size > 2000000)
					found++;
	std::fclose(f);
	unlink(path);
	std::printf("inspect: %s names %d of 4 level_ functions at their addresses\n", path, found);
	if (found != 4)
		fail("the perf map does not name every moved level_ function");
}

/* --spin: loop in the level_ functions for the seconds in arg */
static void *spin(void *arg)
{
	time_t end = time(NULL) + std::atoi((const char *)arg);
	volatile long sum = 0;
	while (time(NULL) < end)
		for (int i = 0; i < 100000; i++)
			sum += level_a(i & 7);
	return sum == 42 ? arg : nullptr;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !std::strcmp(argv[1], "--spin")) {
		spin_mode = 1;
		std::printf("ready %ld\n", (long)getpid());
		std::fflush(stdout);
		return spin(argv[2]) != nullptr;
	}
	if (argc == 3 && !std::strcmp(argv[1], "--spin-thread")) {
		/* the main thread waits, asleep: only the other one uses the CPU */
		spin_mode = 1;
		pthread_t t;
		void *r = nullptr;
		if (pthread_create(&t, nullptr, spin, argv[2]) != 0 || pthread_join(t, &r) != 0)
			fail("cannot start or join the spinning thread");
		return r != nullptr;
	}
	if (argc == 2 && !std::strcmp(argv[1], "--file"))
		file_mode = 1;
	check_moved();
	int v = level_a(4);
	if (v != ((4 * 5 + 3) * 2 + 1))
		fail("wrong result through the level_ functions");
	std::printf("inspect: backtrace() + dladdr: %s\n", trace_backtrace.c_str());
	std::printf("inspect: unw_backtrace + dladdr: %s\n", trace_unwind.c_str());
	if (trace_backtrace != "level_d level_c level_b level_a ")
		fail("backtrace() through moved frames");
	if (trace_unwind != "level_d level_c level_b level_a ")
		fail("unw_backtrace through moved frames");
	/* take_traces' caller is level_d: the walk starts there */
	std::printf("inspect: unw_step + unw_get_proc_name: %s\n",
	            trace_procname.empty() ? "(no names)" : trace_procname.c_str());
	if (file_mode && trace_procname != "level_d level_c level_b level_a ")
		fail("unw_get_proc_name through zero-copy frames");
	int caught = 0;
	for (int i = 0; i < 1000; i++) {
		try {
			level_a(-1 - i);
		} catch (const std::runtime_error &e) {
			if (!std::strcmp(e.what(), "thrown in level_d"))
				caught++;
		}
	}
	std::printf("inspect: %d of 1000 exceptions thrown in level_d caught in main\n", caught);
	if (caught != 1000)
		fail("C++ exceptions through moved frames");
	if (level_end(7) != 7)
		fail("level_end");
	if (argc == 2 && !std::strcmp(argv[1], "--perfmap"))
		check_perfmap();
	std::printf("inspect: %s\n", failures ? "FAIL" : "PASS");
	return failures ? 1 : 0;
}
