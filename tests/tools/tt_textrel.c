/* tt_textrel — a library with text relocations (x86-64, linked with
 * -z notext): an absolute address stored in .text needs a dynamic
 * relocation there. */
int tt_tr_target = 42;

__asm__(".text\n"
        ".globl tt_tr_ptr\n"
        ".type tt_tr_ptr, @object\n"
        ".p2align 3\n"
        "tt_tr_ptr: .quad tt_tr_target\n"
        ".size tt_tr_ptr, 8\n");

int tt_tr_value(void);
int tt_tr_value(void)
{
	extern int *const tt_tr_ptr;
	return *tt_tr_ptr;
}
