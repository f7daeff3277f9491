/*
 * dr_ident.c — a library that says which one it is, for the
 * dlopen-resolution tests (dlopen_resolve.sh, dlopen_pass.sh).
 *
 * CMake compiles it once (dlresolve.cmake: dr_ident.o, and dr_ident_undef.o
 * with DR_UNDEF); the scripts link it into every library of their layouts
 * and then write the copy's identity over the placeholder in dr_ident_text
 * (one link a distinct set of flags, then a cp and a patch for each copy:
 * the layouts need dozens).  dr_ident() returns it, and so does zlibVersion(),
 * so that a copy with the soname libz.so.1 answers like the system's libz
 * (whose zlibVersion returns its version).  DR_UNDEF adds a reference to a
 * function nothing defines: an RTLD_NOW dlopen of that copy fails.
 */
#define DR_EXPORT __attribute__((visibility("default")))

/* The scripts find this string in the linked file and overwrite it
 * (NUL-terminated, at most 63 bytes).  Hidden: every copy must return its
 * own, not the first loaded copy's. */
__attribute__((visibility("hidden"))) const char dr_ident_text[64] = "@DR-IDENT-PLACEHOLDER@";

DR_EXPORT const char *dr_ident(void)
{
	return dr_ident_text;
}

DR_EXPORT const char *zlibVersion(void)
{
	return dr_ident_text;
}

#ifdef DR_UNDEF
extern int dr_missing_symbol(void);
DR_EXPORT int dr_use_missing(void)
{
	return dr_missing_symbol();
}
#endif
