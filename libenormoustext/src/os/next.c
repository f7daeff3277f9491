/*
 * os/next.c — the next definition of a symbol after this library: libc's
 * (or the loader's) own function, past this library's wrapper of it.
 *
 * With glibc the lookup is this file's own: the objects after this one in
 * the loader's list (_r_debug.r_map, the order RTLD_NEXT searches), each
 * object's GNU hash table, the default version of the name.  It takes no
 * lock, allocates nothing and calls no function of libc's, so a wrapper
 * may do it at its first call wherever that comes — in a vfork child, in
 * the child of a fork in a threaded program, in a signal handler, where
 * dlsym (the loader's lock) is not safe — and nothing is looked up at
 * start-up: a process that never calls a wrapped function pays nothing
 * (the eight dlsym calls the wrappers' constructors made cost /bin/true
 * about 0.3% of its start here: an empty preloaded library with them
 * against one without, 15 pairs of 100 runs alternated).  What it does not settle (no GNU hash table, an IFUNC, a
 * name found only in a hidden version, musl's loader) goes to
 * dlsym(RTLD_NEXT) as before.
 *
 * Owns: the one lookup the wrappers (interpose/) and the library's own
 * calls to libc (os/perf.c's sigaction, os/thread.c's pthread_create) use.
 * May call: the loader (dlsym(RTLD_NEXT)) where its own lookup does not
 * settle a name, once per symbol.
 * Never: looks a symbol up again once found; writes to the loader's data.
 */
#include "os/os.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdint.h>

#if defined(__GLIBC__) && defined(DT_GNU_HASH)
/* this object's dynamic section (the linker's symbol); weak: a program
 * linked statically with libenormoustext.a has none */
extern ElfW(Dyn) _DYNAMIC[] __attribute__((weak, visibility("hidden")));

struct dso_tables {
	const uint32_t *gnu_hash;
	const ElfW(Sym) *symtab;
	const char *strtab;
	const ElfW(Half) *versym;
};

/* glibc relocates the d_ptr entries of a loaded object's dynamic section
 * in place on the architectures this library supports; an entry below the
 * load base is an offset still (a loader that does not). */
ET_STARTUP static const void *dyn_ptr(const struct link_map *l, ElfW(Addr) v)
{
	return (const void *)(v < l->l_addr ? l->l_addr + v : v);
}

ET_STARTUP static bool tables_of(const struct link_map *l, struct dso_tables *t)
{
	*t = (struct dso_tables){ 0 };
	if (!l->l_ld)
		return false;
	for (const ElfW(Dyn) *d = l->l_ld; d->d_tag != DT_NULL; d++) {
		switch (d->d_tag) {
		case DT_GNU_HASH: t->gnu_hash = dyn_ptr(l, d->d_un.d_ptr); break;
		case DT_SYMTAB: t->symtab = dyn_ptr(l, d->d_un.d_ptr); break;
		case DT_STRTAB: t->strtab = dyn_ptr(l, d->d_un.d_ptr); break;
		case DT_VERSYM: t->versym = dyn_ptr(l, d->d_un.d_ptr); break;
		default: break;
		}
	}
	return t->gnu_hash && t->symtab && t->strtab;
}

ET_STARTUP static bool same_name(const char *a, const char *b)
{
	for (; *a && *a == *b; a++, b++)
		;
	return *a == *b;
}

enum found { F_NONE, F_HERE, F_ASK };   /* not here; defined here; dlsym must settle it */

/* NAME (hash H) in one object: its default version's address. */
ET_STARTUP static enum found find_in(const struct link_map *l, const char *name, uint32_t h, void **out)
{
	struct dso_tables t;
	if (!tables_of(l, &t))
		return F_ASK;
	const uint32_t nbuckets = t.gnu_hash[0], symoffset = t.gnu_hash[1];
	const uint32_t bloom_size = t.gnu_hash[2], bloom_shift = t.gnu_hash[3];
	if (!nbuckets || !bloom_size)
		return F_NONE;
	const ElfW(Addr) *bloom = (const ElfW(Addr) *)(const void *)&t.gnu_hash[4];
	const uint32_t *buckets = (const uint32_t *)(const void *)&bloom[bloom_size];
	const uint32_t *chain = &buckets[nbuckets];
	const unsigned bits = sizeof(ElfW(Addr)) * 8;
	ElfW(Addr) word = bloom[(h / bits) % bloom_size];
	ElfW(Addr) mask = ((ElfW(Addr))1 << (h % bits)) | ((ElfW(Addr))1 << ((h >> bloom_shift) % bits));
	if ((word & mask) != mask)
		return F_NONE;
	uint32_t i = buckets[h % nbuckets];
	if (i < symoffset)
		return F_NONE;
	enum found r = F_NONE;
	for (;; i++) {
		uint32_t ch = chain[i - symoffset];
		const ElfW(Sym) *s = &t.symtab[i];
		if ((ch | 1) == (h | 1) && same_name(name, t.strtab + s->st_name) && s->st_shndx != SHN_UNDEF) {
			/* (the 32- and 64-bit macros are the same) */
			unsigned type = ELF64_ST_TYPE(s->st_info), bind = ELF64_ST_BIND(s->st_info);
			ElfW(Half) v = t.versym ? t.versym[i] : 1;
			bool visible = bind == STB_GLOBAL || bind == STB_WEAK;
			if (visible && type == STT_FUNC && !(v & 0x8000) && (v & 0x7fff) != 0) {
				*out = (void *)(l->l_addr + s->st_value);
				return F_HERE;
			}
			if (visible)
				r = F_ASK;   /* an IFUNC, data, a hidden or local version: dlsym's business */
		}
		if (ch & 1)
			return r;
	}
}

/* The GNU hash of a symbol name (DT_GNU_HASH's function). */
ET_STARTUP static uint32_t name_hash(const char *name)
{
	uint32_t h = 5381;
	for (const unsigned char *c = (const unsigned char *)name; *c; c++)
		h = h * 33 + *c;
	return h;
}

/* The next definition after this object: found, or NULL where dlsym must
 * be asked (or this is not the loader's list as expected). */
ET_STARTUP static void *own_lookup(const char *name)
{
	if (!_DYNAMIC)
		return NULL;
	uint32_t h = name_hash(name);
	const struct link_map *l = _r_debug.r_map;
	while (l && l->l_ld != _DYNAMIC)
		l = l->l_next;
	if (!l)
		return NULL;
	for (l = l->l_next; l; l = l->l_next) {
		void *p = NULL;
		switch (find_in(l, name, h, &p)) {
		case F_HERE: return p;
		case F_ASK: return NULL;
		case F_NONE: break;
		}
	}
	return NULL;
}

/* Is NAME defined (default version, a function) in an object other than
 * this one?  0: in none, for sure; 1: maybe (found, or a table this walk
 * cannot read: dlsym must say). */
ET_STARTUP int et_os_defined_elsewhere(const char *name)
{
	if (!_DYNAMIC)
		return 1;
	uint32_t h = name_hash(name);
	for (const struct link_map *l = _r_debug.r_map; l; l = l->l_next) {
		if (l->l_ld == _DYNAMIC)
			continue;
		void *p = NULL;
		if (find_in(l, name, h, &p) != F_NONE)
			return 1;
	}
	return 0;
}
#else
static void *own_lookup(const char *name)
{
	(void)name;
	return NULL;
}

int et_os_defined_elsewhere(const char *name)
{
	(void)name;
	return 1;
}
#endif

ET_STARTUP void *et_os_next(void **cache, const char *name)
{
	void *p = __atomic_load_n(cache, __ATOMIC_ACQUIRE);
	if (!p) {
		p = own_lookup(name);
		if (!p)
			p = dlsym(RTLD_NEXT, name);
		__atomic_store_n(cache, p, __ATOMIC_RELEASE);
	}
	return p;
}

/* For the tests (tests/unit/test_next.c): this file's own answer alone,
 * NULL where it would ask dlsym. */
void *et_os_next_own(const char *name)
{
	return own_lookup(name);
}
