/*
 * textrel_lib.c — a shared library with text relocations (DT_TEXTREL) and
 * more than two huge-page windows of text: the library must leave it alone.
 * x86-64 only: an absolute pointer placed in .text needs a dynamic
 * relocation there (linked with -z notext).
 */
int et_tr_target = 42;

__asm__(".text\n"
        ".globl et_tr_ptr\n"
        ".type et_tr_ptr, @object\n"
        ".p2align 3\n"
        "et_tr_ptr: .quad et_tr_target\n"
        ".size et_tr_ptr, 8\n"
        /* 6 MiB of text, so that whole 2 MiB windows exist. */
        ".skip 6291456, 0xcc\n");

int et_tr_value(void)
{
	extern int *const et_tr_ptr;
	return *et_tr_ptr;
}
