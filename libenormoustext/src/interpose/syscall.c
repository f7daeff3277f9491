/*
 * interpose/syscall.c — syscall(3), for the calls that concern the library
 * and that programs make through it rather than through a libc function of
 * their own: seccomp(2) (libseccomp installs its filters with
 * syscall(__NR_seccomp, ...); glibc has no seccomp function), and prctl,
 * unshare, setns, chroot made that way.
 *
 *   seccomp(SECCOMP_SET_MODE_FILTER | _STRICT), prctl(PR_SET_SECCOMP):
 *       the library stands down before the filter goes in
 *       (runtime/sandbox.c: a filter may kill for its calls);
 *   prctl(PR_SET_MDWE): no copy can be made executable any more;
 *   unshare, setns, chroot, prctl(PR_SET_THP_DISABLE): what interpose/ns.c
 *       does for the libc functions of those names.
 * Every other call goes straight on.
 *
 * Defined with seven fixed arguments, not `...`: on x86-64 and AArch64
 * (the only architectures it is built for: the library's own system calls
 * are made without syscall(3) there, os/sys.c) a variadic call passes its
 * integer arguments where a fixed one does, and libc's syscall reads
 * exactly six after the number.  It ends in a sibling call to libc's
 * function, so that the call stays the program's to whatever looks at
 * return addresses.
 *
 * Owns: that symbol as the program sees it.
 * May call: the next definition (libc's), runtime/defer.h, runtime/sandbox.h.
 * Never: changes what the call does, returns or leaves in errno; is called
 * by the library itself.
 */
#if defined(__x86_64__) || defined(__aarch64__)
#include "interpose/interpose.h"
#include "runtime/defer.h"
#include "runtime/sandbox.h"

#include <errno.h>
#include <sys/syscall.h>

#ifndef SYS_seccomp
#define SYS_seccomp 277   /* x86-64; AArch64's <sys/syscall.h> always has it */
#endif
#define ET_SECCOMP_SET_MODE_STRICT 0
#define ET_SECCOMP_SET_MODE_FILTER 1
#define ET_PR_SET_SECCOMP 22
#define ET_PR_SET_THP_DISABLE 41
#define ET_PR_SET_MDWE 65

typedef long (*syscall_fn)(long, long, long, long, long, long, long);

static void *g_syscall;

#ifndef __GLIBC__   /* glibc: found at the first call (os/next.c's own lookup) */
__attribute__((constructor)) static void syscall_resolve(void)
{
	(void)next_symbol(&g_syscall, "syscall");
}
#endif

/* What a call that concerns the library needs first (see the banner). */
static void before(long n, long a1, long a2)
{
	if (n == SYS_seccomp && (a1 == ET_SECCOMP_SET_MODE_FILTER || a1 == ET_SECCOMP_SET_MODE_STRICT))
		et_sandbox_entering("seccomp(2)");
	else if (n == SYS_prctl && a1 == ET_PR_SET_SECCOMP)
		et_sandbox_entering("prctl(PR_SET_SECCOMP)");
	else if (n == SYS_prctl && a1 == ET_PR_SET_MDWE && (a2 & 1))
		et_sandbox_mdwe_set();
	else if (n == SYS_prctl && a1 == ET_PR_SET_THP_DISABLE && a2 != 0)
		et_defer_hurry("prctl(PR_SET_THP_DISABLE)");
	else if (n == SYS_unshare)
		et_defer_stand_down("unshare");
	else if (n == SYS_setns)
		et_defer_stand_down("setns");
	else if (n == SYS_chroot)
		et_defer_stand_down("chroot");
}

/* Named syscall for the linker (the asm label): the C name differs so that
 * no header's `long syscall(long, ...)` conflicts with these seven. */
ET_EXPORT long et_syscall_wrapper(long n, long a1, long a2, long a3, long a4, long a5, long a6) __asm__("syscall");
long et_syscall_wrapper(long n, long a1, long a2, long a3, long a4, long a5, long a6)
{
	syscall_fn next = (syscall_fn)next_symbol(&g_syscall, "syscall");
	if (__builtin_expect(!next, 0))
		return et_os_sys6(n, a1, a2, a3, a4, a5, a6);
	if (__builtin_expect(n == SYS_seccomp || n == SYS_prctl || n == SYS_unshare || n == SYS_setns ||
	                     n == SYS_chroot, 0)) {
		int saved = errno;
		before(n, a1, a2);
		errno = saved;
	}
	return next(n, a1, a2, a3, a4, a5, a6);
}
#endif
