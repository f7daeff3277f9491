/* tt_smallprog — a small program for the `check` tests of what
 * linker-scripts/enormous.ld costs: 100 KiB of text (a `.skip` of `ret`,
 * as in tt_hold), well under half a 2 MiB page.  The tests link it at test
 * time: plainly, and with the script alone (GNU ld and lld). */
__asm__(".text\n"
        ".p2align 12\n"
        ".globl tt_small_text\n"
        ".type tt_small_text, @function\n"
        "tt_small_text:\n"
        ".skip 102400, 0xc3\n"
        ".size tt_small_text, 102400\n");

extern void tt_small_text(void);

int main(void)
{
	tt_small_text();
	return 0;
}
