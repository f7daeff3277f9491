/*
 * script.c — the third way in: linked with -T enormous.ld (and
 * -lenormoustext), through enormoustext_huge_text() in CMake:
 *
 *   find_package(enormoustext REQUIRED)
 *   add_executable(app script.c)
 *   enormoustext_huge_text(app)
 *
 * The text starts and ends on 2 MiB boundaries, so all of it, head and
 * tail, goes onto huge pages — 100% of it, where the other ways leave the
 * partial first and last windows small.
 */
#define _GNU_SOURCE   /* dl_iterate_phdr */
#include "bigcode.h"
#include "example_text.h"

int main(void)
{
	printf("example_script: checksum %d\n", example_work(bc_run, 1500));
	example_report("example_script");
	return 0;
}
