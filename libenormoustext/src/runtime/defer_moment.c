/*
 * runtime/defer_moment.c — a safe moment for the deferred pass on the
 * program's own thread.
 *
 * The tick (runtime/defer.c) interrupts the program's main thread with a
 * signal; whether the pass may run there and then is read from what the
 * kernel says of the process (/proc/self/stat: its threads; /proc/self/maps:
 * which mapping holds the interrupted program counter, where the main
 * stack is and what lies under it) and from the interrupted frame.  Not
 * safe: another thread the library did not see made, the program inside
 * libc or the loader (a lock of theirs may be half-taken, the loader's
 * list half-changed) or inside this library, too little stack below the
 * frame.
 *
 * Owns: nothing (no state).
 * May call: libc (open, read, getrlimit, readlink; async-signal-safe),
 * the auxiliary vector.
 * Never: allocates, or keeps a descriptor past its return; it runs in a
 * signal handler.
 */
#include "runtime/defer_moment.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/resource.h>
#include <ucontext.h>
#include <unistd.h>

/* Read an whole small /proc file into buf (NUL-ended); its length or -1. */
static long read_small(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	size_t n = 0;
	for (;;) {
		ssize_t r = read(fd, buf + n, cap - 1 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
		if (n == cap - 1)
			break;
	}
	close(fd);
	buf[n] = '\0';
	return (long)n;
}

/* The kernel's count of the process's threads (field 20 of /proc/self/stat). */
static long thread_count(void)
{
	char b[1024];
	if (read_small("/proc/self/stat", b, sizeof b) <= 0)
		return -1;
	const char *p = strrchr(b, ')');
	if (!p)
		return -1;
	/* ") S ppid ...": field 3 is the state; 20 is num_threads */
	int field = 2;
	for (; *p && field < 20; p++)
		if (*p == ' ')
			field++;
	long n = 0;
	while (*p >= '0' && *p <= '9')
		n = n * 10 + (*p++ - '0');
	return n > 0 ? n : -1;
}

static unsigned long hex_at(const char **pp)
{
	unsigned long v = 0;
	const char *p = *pp;
	for (;; p++) {
		char c = *p;
		int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
		if (d < 0)
			break;
		v = v * 16 + (unsigned long)d;
	}
	*pp = p;
	return v;
}

/* Libraries whose code may hold a lock the pass takes (the loader's, a
 * mutex half-taken) or be changing the loader's list: libc, the loader,
 * glibc's older split-off parts. */
static bool is_libc(const char *path)
{
	const char *b = strrchr(path, '/');
	b = b ? b + 1 : path;
	/* arrays, not pointers: no relocation when the library loads */
	static const char names[][16] = { "libc.so", "libc-", "ld-linux", "ld-musl", "libc.musl", "ld64.so",
		                          "ld.so", "libpthread.so", "libpthread-", "libdl.so", "libdl-" };
	for (size_t i = 0; i < sizeof names / sizeof *names; i++)
		if (!strncmp(b, names[i], strlen(names[i])))
			return true;
	return false;
}

struct tick_maps {
	uintptr_t pc, sp, self;
	char pc_path[256], self_path[256];
	uintptr_t stack_lo, stack_hi, below_stack;   /* [stack], and the end of the mapping under it */
	bool pc_found, self_found, stack_found;
};

static void copy_path(char *to, size_t cap, const char *from)
{
	size_t n = 0;
	while (from[n] && n + 1 < cap) {
		to[n] = from[n];
		n++;
	}
	to[n] = '\0';
}

static void maps_line(struct tick_maps *m, const char *line, uintptr_t *prev_end)
{
	const char *p = line;
	uintptr_t lo = hex_at(&p);
	if (*p != '-')
		return;
	p++;
	uintptr_t hi = hex_at(&p);
	/* perms offset dev inode, then the path after blanks */
	for (int f = 0; f < 4 && *p; f++) {
		while (*p == ' ')
			p++;
		while (*p && *p != ' ')
			p++;
	}
	while (*p == ' ')
		p++;
	if (m->pc >= lo && m->pc < hi) {
		m->pc_found = true;
		copy_path(m->pc_path, sizeof m->pc_path, p);
	}
	if (m->self >= lo && m->self < hi) {
		m->self_found = true;
		copy_path(m->self_path, sizeof m->self_path, p);
	}
	if (!strcmp(p, "[stack]")) {
		m->stack_found = true;
		m->stack_lo = lo;
		m->stack_hi = hi;
		m->below_stack = *prev_end;
	}
	*prev_end = hi;
}

/* /proc/self/maps, read in pieces: where the program counter, the stack
 * and this library are.  false: it could not be read. */
static bool read_maps(struct tick_maps *m)
{
	char g_maps_buf[2048];   /* on the stack: nothing in .bss for every process the library loads into */
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	size_t have = 0;
	uintptr_t prev_end = 0;
	for (;;) {
		ssize_t r = read(fd, g_maps_buf + have, sizeof g_maps_buf - 1 - have);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		have += (size_t)r;
		g_maps_buf[have] = '\0';
		char *start = g_maps_buf, *nl;
		while ((nl = strchr(start, '\n'))) {
			*nl = '\0';
			maps_line(m, start, &prev_end);
			start = nl + 1;
		}
		have = (size_t)(g_maps_buf + have - start);
		memmove(g_maps_buf, start, have);
		if (have == sizeof g_maps_buf - 1)
			have = 0;   /* a line longer than the buffer: dropped */
	}
	close(fd);
	return true;
}

static uintptr_t context_sp(const void *ucv, uintptr_t *pc)
{
	const ucontext_t *uc = ucv;
#if defined(__x86_64__)
	*pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
	return (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
#elif defined(__i386__)
	*pc = (uintptr_t)uc->uc_mcontext.gregs[REG_EIP];
	return (uintptr_t)uc->uc_mcontext.gregs[REG_ESP];
#elif defined(__aarch64__)
	*pc = (uintptr_t)uc->uc_mcontext.pc;
	return (uintptr_t)uc->uc_mcontext.sp;
#else
	(void)uc;
	*pc = 0;
	return 0;
#endif
}

bool et_defer_moment_safe(const void *uc, uintptr_t self, uintptr_t need_stack, const char **why, bool *never)
{
	*never = false;
	long n = thread_count();
	if (n != 1) {
		*why = n > 1 ? "the program has threads the library did not see made (clone)" :
		               "/proc/self/stat could not be read";
		*never = n > 1;
		return false;
	}
	struct tick_maps m;
	memset(&m, 0, sizeof m);
	m.sp = context_sp(uc, &m.pc);
	m.self = self;
	if (!m.sp || !read_maps(&m)) {
		*why = "/proc/self/maps could not be read";
		*never = !m.sp;
		return false;
	}
	if (!m.pc_found || is_libc(m.pc_path)) {
		*why = "the program was always inside libc or the loader";
		return false;
	}
	/* this library's own code, unless it is part of the program (linked
	 * in: then its locks are the pass locks, checked above) */
	if (m.self_found && !strcmp(m.pc_path, m.self_path) && strcmp(m.self_path, "[anon]") &&
	    getauxval(AT_BASE) != 0) {
		char exe[256];
		ssize_t l = readlink("/proc/self/exe", exe, sizeof exe - 1);
		exe[l > 0 ? l : 0] = '\0';
		if (strcmp(exe, m.self_path)) {
			*why = "the program was always inside the library";
			return false;
		}
	}
	/* the main thread's stack, with room below the interrupted frame: the
	 * room already mapped, or room the stack may still grow into (its
	 * limit, and the kernel's guard gap above the mapping under it) */
	bool room = false;
	if (m.stack_found && m.sp > m.stack_lo && m.sp <= m.stack_hi) {
		uintptr_t need = m.sp - need_stack;
		if (m.sp > need_stack && need >= m.stack_lo)
			room = true;
		else {
			struct rlimit rl;
			if (m.sp > need_stack && getrlimit(RLIMIT_STACK, &rl) == 0) {
				uintptr_t lim = rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > m.stack_hi ? m.stack_hi :
				                                                                          (uintptr_t)rl.rlim_cur;
				room = need >= m.stack_hi - lim && need >= m.below_stack + (1u << 20);
			}
		}
	}
	if (!room) {
		*why = "the program was never on its main stack with room to spare";
		return false;
	}
	return true;
}

