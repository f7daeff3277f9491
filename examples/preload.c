/*
 * preload.c — the first way in: no rebuild, LD_PRELOAD.
 *
 * An ordinary program (it does not know the library); run it as
 *
 *   LD_PRELOAD=build/libenormoustext.so build/examples/example_preload
 *
 * and its text is on huge pages when main() starts.  It prints how much.
 * preload.sh does the same for any command.
 */
#define _GNU_SOURCE   /* dl_iterate_phdr */
#include "bigcode.h"
#include "example_text.h"

int main(void)
{
	printf("example_preload: checksum %d\n", bc_run());
	example_report("example_preload");
	return 0;
}
