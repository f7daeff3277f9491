/*
 * linked.c — the second way in: link with -lenormoustext.
 *
 * The library starts with the program; by default it moves the text once
 * the process has lived a second (ENORMOUSTEXT_DEFER=1s), on a thread of
 * its own.  This program works for 1.5 s, then asks what the library did,
 * through the public API, and prints it.
 *
 *   cc linked.c -lenormoustext -o linked && ./linked
 */
#define _GNU_SOURCE   /* dl_iterate_phdr */
#include <stdio.h>

#include "enormoustext.h"
#include "bigcode.h"
#include "example_text.h"

int main(void)
{
	printf("example_linked: checksum %d\n", example_work(bc_run, 1500));
	example_report("example_linked");
	struct enormoustext_stats st = { .size = sizeof st };
	int err = enormoustext_get_stats(&st);
	if (err) {
		fprintf(stderr, "linked: enormoustext_get_stats: error %d\n", err);
		return 1;
	}
	printf("libenormoustext %s: %llu of %llu text bytes on %llu KiB pages (%s)%s%s\n",
	       enormoustext_version(), (unsigned long long)st.huge_bytes,
	       (unsigned long long)st.text_bytes, (unsigned long long)(st.pmd_size >> 10),
	       st.backend, st.reason[0] ? " — " : "", st.reason);
	int n = enormoustext_object_count();
	for (int i = 0; i < n; i++) {
		struct enormoustext_object o = { .size = sizeof o };
		if (enormoustext_get_object((unsigned)i, &o) != 0)
			continue;
		printf("  %-50s text %9llu  huge %9llu  %s%s%s\n", o.path[0] ? o.path : "?",
		       (unsigned long long)o.text_bytes, (unsigned long long)o.huge_bytes, o.backend,
		       o.reason[0] ? ": " : "", o.reason);
	}
	return 0;
}
