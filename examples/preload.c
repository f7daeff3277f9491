/*
 * preload.c — the first way in: no rebuild, LD_PRELOAD.
 *
 * An ordinary program (it does not know the library); run it as
 *
 *   LD_PRELOAD=build/libenormoustext.so build/examples/example_preload
 *
 * and, as it works, its text goes onto huge pages: by default the library
 * moves it once the process has lived a second (ENORMOUSTEXT_DEFER=1s; 0
 * moves it before main() starts).  It works for 1.5 s, then prints how
 * much of its text is huge.
 * preload.sh does the same for any command.
 */
#define _GNU_SOURCE   /* dl_iterate_phdr */
#include "bigcode.h"
#include "example_text.h"

int main(void)
{
	printf("example_preload: checksum %d\n", example_work(bc_run, 1500));
	example_report("example_preload");
	return 0;
}
