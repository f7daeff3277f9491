/*
 * fr_wxprog — asks for memory that is writable and executable at once, so
 * that the W+X test can show its filter kills such a process.
 *
 *   fr_wxprog mmap       mmap(PROT_READ|PROT_WRITE|PROT_EXEC)
 *   fr_wxprog mprotect   mmap read-write, then mprotect it RWX
 *   fr_wxprog rx         mmap read-write, then mprotect it read-exec (allowed)
 *
 * Prints what it got and exits 0; under the filter the first two are killed
 * (SIGSYS) before they print.
 */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

int main(int argc, char **argv)
{
	const char *how = argc > 1 ? argv[1] : "";
	void *p;

	if (!strcmp(how, "mmap")) {
		p = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	} else if (!strcmp(how, "mprotect") || !strcmp(how, "rx")) {
		p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p != MAP_FAILED &&
		    mprotect(p, 4096, PROT_READ | PROT_EXEC | (!strcmp(how, "mprotect") ? PROT_WRITE : 0)) != 0)
			p = MAP_FAILED;
	} else {
		printf("usage: fr_wxprog mmap|mprotect|rx\n");
		return 2;
	}
	printf("fr_wxprog: %s: %s\n", how, p == MAP_FAILED ? "refused" : "granted");
	return 0;
}
