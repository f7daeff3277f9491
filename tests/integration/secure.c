/*
 * secure.c — linked with libenormoustext.a, with 6 MiB of text of its own,
 * and run setuid (by secure.sh): in a secure-execution process (AT_SECURE) the
 * library must do nothing at all — no remap, no message, no report file —
 * whatever the environment says.
 *
 * Exit: 0 pass, 1 fail, 77 when the process is not in secure-execution
 * mode (the test could not set it up).
 */
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>

#include "enormoustext.h"

/* 6 MiB of text, so that whole 2 MiB windows exist. */
__asm__(".text\n.p2align 21\net_secure_pad: .skip 6291456, 0xcc\n");

int main(void)
{
	if (!getauxval(AT_SECURE)) {
		printf("secure: not a secure-execution process (AT_SECURE is 0): run setuid\n");
		return 77;
	}
	struct enormoustext_stats st = { .size = sizeof st };
	if (enormoustext_get_stats(&st) != 0) {
		printf("secure: FAIL: enormoustext_get_stats failed\n");
		return 1;
	}
	if (st.ran || st.remapped_bytes || st.huge_bytes) {
		printf("secure: FAIL: the library ran in a secure-execution process (ran %u, remapped %llu)\n",
		       st.ran, (unsigned long long)st.remapped_bytes);
		return 1;
	}
	FILE *f = fopen("/proc/self/smaps", "r");
	if (!f) {
		printf("secure: FAIL: cannot read /proc/self/smaps\n");
		return 1;
	}
	char line[4096], perms[8];
	unsigned long a, b, kb, huge = 0;
	int x = 0;
	while (fgets(line, sizeof line, f)) {
		if (sscanf(line, "%lx-%lx %7s", &a, &b, perms) == 3) {
			x = perms[2] == 'x';
			continue;
		}
		if (x && sscanf(line, "AnonHugePages: %lu kB", &kb) == 1)
			huge += kb;
	}
	fclose(f);
	if (huge) {
		printf("secure: FAIL: %lu kB of executable mappings are anonymous huge pages\n", huge);
		return 1;
	}
	printf("secure: PASS: AT_SECURE, nothing done (reason '%s')\n", st.reason);
	return 0;
}
