/*
 * fr_shim — a deliberately broken stand-in for libenormoustext, preloaded
 * by the fault tests' self-checks to show that each test can fail.  It is
 * built as libenormoustext-frshim.so (faultrun attributes calls by that
 * name) and breaks the rule the tests check in the plainest ways:
 *
 *   - it reserves 64 MiB of address space (mmap) and, when that fails
 *     (faultrun's mmap rule, a tight RLIMIT_AS), says so on stderr and
 *     exits 3: a fault underneath changes what the program does;
 *   - when /sys/kernel/mm/transparent_hugepage/enabled says [never] it
 *     exits 4 (a THP setting changes what the program does);
 *   - for each ENORMOUSTEXT_* variable it finds in the environment it
 *     writes two warning lines, whatever ENORMOUSTEXT_VERBOSE says.
 *
 * Nothing else: with no fault, THP not "never" and no such variable, a
 * program runs with it exactly as without it.  Never used outside tests.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

extern char **environ;

static void say(const char *a, const char *b)
{
	char line[256];
	size_t n = 0, la = strlen(a), lb = strlen(b);

	if (la + lb + 2 > sizeof line)
		lb = sizeof line - la - 2;
	memcpy(line, a, la);
	n += la;
	memcpy(line + n, b, lb);
	n += lb;
	line[n++] = '\n';
	if (write(2, line, n) < 0)
		return;
}

__attribute__((constructor)) static void fr_shim_init(void)
{
	void *p = mmap(NULL, 64u << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (p == MAP_FAILED) {
		say("enormoustext: fr_shim: cannot reserve 64 MiB: ", "giving up");
		_exit(3);
	}
	munmap(p, 64u << 20);

	int fd = open("/sys/kernel/mm/transparent_hugepage/enabled", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		char buf[128];
		ssize_t r = read(fd, buf, sizeof buf - 1);
		close(fd);
		if (r > 0) {
			buf[r] = 0;
			if (strstr(buf, "[never]"))
				_exit(4);
		}
	}

	for (char **e = environ; e && *e; e++) {
		/* (ENORMOUSTEXT_DEFER=0, _PRIME=0 and _COPY_MIN=0 are what the
		 * tests' lib.sh sets: not variables a test gives it) */
		if (strncmp(*e, "ENORMOUSTEXT", 12) != 0 || !strcmp(*e, "ENORMOUSTEXT_DEFER=0") ||
		    !strcmp(*e, "ENORMOUSTEXT_PRIME=0") || !strcmp(*e, "ENORMOUSTEXT_COPY_MIN=0"))
			continue;
		const char *eq = strchr(*e, '=');
		char name[64];
		size_t n = eq ? (size_t)(eq - *e) : strlen(*e);
		if (n >= sizeof name)
			n = sizeof name - 1;
		memcpy(name, *e, n);
		name[n] = 0;
		say("enormoustext: fr_shim: a bad value in ", name);
		say("enormoustext: fr_shim: and again: ", name);
	}
}
