/*
 * core/smaps.c — the mappings of a process and what backs them, from
 * /proc/PID/smaps: the only place that says whether a range really sits on
 * huge pages (AnonHugePages, FilePmdMapped, ShmemPmdMapped, *_Hugetlb).
 *
 * Parsed with read(2) into a scratch mapping: no stdio, no malloc.  The
 * tables are sized for the kernel's maximum map count but only the pages
 * touched cost memory.
 *
 * And whose text an anonymous executable mapping holds (et_smaps_attribute,
 * the rule in smaps.h): from the ELF program headers of the files mapped,
 * read with pread(2), never from the order of the mappings alone — a copy
 * of an object's first window has no mapping of that object before it.
 *
 * Owns: the smaps text format; which object's text an anonymous mapping is.
 * May call: core (util: scratch memory).
 * Never: judges what it reads (runtime/verify.c does); reads more of a
 * file than its ELF and program headers.
 */
#include "core/smaps.h"

#include "core/util.h"
#include "os/os.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#define VMA_CAP   65536u
#define POOL_CAP  (8u << 20)
#define READ_BUF  (64u << 10)
#define RANGE_CAP 16384u        /* executable PT_LOADs (et_smaps_attribute) */

static bool is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

static const char *hex(const char *p, const char *e, uint64_t *v)
{
	uint64_t x = 0;
	for (; p < e && is_hex(*p); p++)
		x = x * 16 + (uint64_t)(*p <= '9' ? *p - '0' : *p - 'a' + 10);
	*v = x;
	return p;
}

static const char *skip_sp(const char *p, const char *e)
{
	while (p < e && *p == ' ')
		p++;
	return p;
}

static const char *skip_word(const char *p, const char *e)
{
	while (p < e && *p != ' ')
		p++;
	return p;
}

static uint32_t pool_add(struct et_smaps *sm, const char *s, size_t n)
{
	/* Neighbouring VMAs usually belong to the same file: reuse its string. */
	if (sm->count > 0) {
		uint32_t last = sm->vmas[sm->count - 1].path_off;
		if (last && strlen(sm->pool + last) == n && !memcmp(sm->pool + last, s, n))
			return last;
	}
	if (sm->pool_len + n + 1 > sm->pool_cap)
		return 0;
	uint32_t off = (uint32_t)sm->pool_len;
	memcpy(sm->pool + off, s, n);
	sm->pool[off + n] = '\0';
	sm->pool_len += n + 1;
	return off;
}

static void parse_header(struct et_smaps *sm, const char *p, const char *e)
{
	if (sm->count >= sm->cap) {
		/* No room: its fields must not land on the previous VMA. */
		sm->dropping = true;
		sm->truncated = true;
		return;
	}
	sm->dropping = false;
	struct et_vma *v = &sm->vmas[sm->count];
	memset(v, 0, sizeof *v);
	p = hex(p, e, &v->start);
	if (p < e && *p == '-')
		p++;
	p = hex(p, e, &v->end);
	p = skip_sp(p, e);
	if (e - p >= 4) {
		v->prot = (p[0] == 'r' ? PROT_READ : 0) | (p[1] == 'w' ? PROT_WRITE : 0) |
		          (p[2] == 'x' ? PROT_EXEC : 0);
		v->shared = p[3] == 's';
	}
	p = skip_word(p, e);
	p = skip_sp(p, e);
	p = hex(p, e, &v->offset);
	p = skip_sp(p, e);
	uint64_t maj = 0, min = 0;    /* dev: "fd:01", hex major:minor */
	p = hex(p, e, &maj);
	if (p < e && *p == ':')
		p++;
	p = hex(p, e, &min);
	v->dev_major = (uint32_t)maj;
	v->dev_minor = (uint32_t)min;
	p = skip_word(p, e);
	p = skip_sp(p, e);
	uint64_t inode = 0;
	for (; p < e && *p >= '0' && *p <= '9'; p++)
		inode = inode * 10 + (uint64_t)(*p - '0');
	v->inode = inode;
	p = skip_sp(p, e);
	if (p < e)
		v->path_off = pool_add(sm, p, (size_t)(e - p));
	sm->count++;
}

static void parse_field(struct et_smaps *sm, const char *p, const char *e)
{
	if (sm->count == 0 || sm->dropping)
		return;
	struct et_vma *v = &sm->vmas[sm->count - 1];
	uint64_t *dst = NULL;
	bool add = false;
	size_t n = (size_t)(e - p);
#define FIELD(name) (n > sizeof(name) - 1 && !memcmp(p, name, sizeof(name) - 1))
	if (FIELD("AnonHugePages:"))
		dst = &v->anon_huge;
	else if (FIELD("FilePmdMapped:"))
		dst = &v->file_pmd;
	else if (FIELD("ShmemPmdMapped:"))
		dst = &v->shmem_pmd;
	else if (FIELD("Anonymous:"))
		dst = &v->anonymous;
	else if (FIELD("Locked:"))
		dst = &v->locked;
	else if (FIELD("Private_Hugetlb:") || FIELD("Shared_Hugetlb:")) {
		dst = &v->hugetlb;
		add = true;
	}
#undef FIELD
	if (!dst)
		return;
	p = memchr(p, ':', n);
	p = skip_sp(p + 1, e);
	uint64_t kb = 0;
	for (; p < e && *p >= '0' && *p <= '9'; p++)
		kb = kb * 10 + (uint64_t)(*p - '0');
	*dst = (add ? *dst : 0) + kb * 1024;
}

static void parse_line(struct et_smaps *sm, const char *p, const char *e)
{
	const char *q = p;
	while (q < e && is_hex(*q))
		q++;
	if (q > p && q < e && *q == '-')
		parse_header(sm, p, e);
	else
		parse_field(sm, p, e);
}

static int smaps_init(struct et_smaps *sm)
{
	memset(sm, 0, sizeof *sm);
	sm->mem_len = VMA_CAP * sizeof(struct et_vma) + POOL_CAP + READ_BUF +
	              RANGE_CAP * sizeof(struct et_text_range);
	sm->mem = et_os_map_anon(sm->mem_len, true);
	if (sm->mem == MAP_FAILED) {
		sm->mem = NULL;
		return -ENOMEM;
	}
	sm->vmas = sm->mem;
	sm->cap = VMA_CAP;
	sm->pool = (char *)sm->mem + VMA_CAP * sizeof(struct et_vma);
	sm->pool_cap = POOL_CAP;
	sm->pool[0] = '\0';
	sm->pool_len = 1;
	sm->ranges = (struct et_text_range *)(sm->pool + POOL_CAP + READ_BUF);
	sm->ranges_cap = RANGE_CAP;
	return 0;
}

int et_smaps_read_fd(struct et_smaps *sm, int fd)
{
	int err = smaps_init(sm);
	if (err)
		return err;
	char *buf = sm->pool + POOL_CAP;
	size_t have = 0;
	for (;;) {
		ssize_t r = read(fd, buf + have, READ_BUF - have);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			break;
		have += (size_t)r;
		size_t start = 0;
		for (size_t i = 0; i < have; i++) {
			if (buf[i] == '\n') {
				parse_line(sm, buf + start, buf + i);
				start = i + 1;
			}
		}
		if (start == 0 && have == READ_BUF) {
			/* A line longer than the buffer (a huge path): drop it. */
			have = 0;
			continue;
		}
		memmove(buf, buf + start, have - start);
		have -= start;
	}
	if (have)
		parse_line(sm, buf, buf + have);
	/* A partial table could attribute figures wrongly: refuse it. */
	return sm->truncated ? -E2BIG : 0;
}

int et_smaps_read(struct et_smaps *sm, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		memset(sm, 0, sizeof *sm);
		return -errno;
	}
	int err = et_smaps_read_fd(sm, fd);
	close(fd);
	if (err)
		et_smaps_free(sm);
	return err;
}

void et_smaps_free(struct et_smaps *sm)
{
	if (sm->mem)
		et_os_unmap(sm->mem, sm->mem_len);
	memset(sm, 0, sizeof *sm);
}

const struct et_vma *et_smaps_find(const struct et_smaps *sm, uint64_t addr)
{
	/* smaps lists VMAs in address order: binary search. */
	size_t lo = 0, hi = sm->count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct et_vma *v = &sm->vmas[mid];
		if (addr < v->start)
			hi = mid;
		else if (addr >= v->end)
			lo = mid + 1;
		else
			return v;
	}
	return NULL;
}

const char *et_vma_path(const struct et_smaps *sm, const struct et_vma *v)
{
	return sm->pool + v->path_off;
}

uint64_t et_vma_huge_bytes(const struct et_vma *v)
{
	return v->anon_huge + v->file_pmd + v->shmem_pmd + v->hugetlb;
}

bool et_vma_is_file(const struct et_smaps *sm, const struct et_vma *v)
{
	const char *p = et_vma_path(sm, v);
	return p[0] && p[0] != '[' && strncmp(p, "/anon_hugepage", 14) && strcmp(p, "/dev/zero (deleted)") &&
	       strncmp(p, "/memfd:", 7);
}

bool et_vma_is_anon(const struct et_smaps *sm, const struct et_vma *v)
{
	const char *p = et_vma_path(sm, v);
	return !p[0] || !strncmp(p, "/anon_hugepage", 14) || !strcmp(p, "/dev/zero (deleted)") ||
	       !strncmp(p, "[anon:", 6) || !strncmp(p, "[anon_shmem:", 12);
}

static bool same_file(const struct et_smaps *sm, const struct et_vma *a, const struct et_vma *b)
{
	return a->inode == b->inode && a->dev_major == b->dev_major && a->dev_minor == b->dev_minor &&
	       (a->path_off == b->path_off || !strcmp(et_vma_path(sm, a), et_vma_path(sm, b)));
}

static const struct et_vma *nearest_file(const struct et_smaps *sm, size_t i, int d)
{
	for (size_t j = i + (size_t)d; j < sm->count; j += (size_t)d)   /* i - 1 wraps past count */
		if (et_vma_is_file(sm, &sm->vmas[j]))
			return &sm->vmas[j];
	return NULL;
}

/* The fallback: the nearest file mappings on both sides are one file's,
 * whose headers could not be read (known text decides by itself). */
static const struct et_vma *by_neighbours(const struct et_smaps *sm, size_t i)
{
	const struct et_vma *a = nearest_file(sm, i, -1), *b = nearest_file(sm, i, +1);
	if (a && b && same_file(sm, a, b) && !a->text_known && !b->text_known)
		return a;
	return NULL;
}

const struct et_vma *et_smaps_copied_from(const struct et_smaps *sm, size_t i)
{
	if (i >= sm->count)
		return NULL;
	if (!sm->attributed)
		return et_vma_is_anon(sm, &sm->vmas[i]) ? by_neighbours(sm, i) : NULL;
	uint32_t o = sm->vmas[i].owner;
	return o ? &sm->vmas[o - 1] : NULL;
}

bool et_smaps_copied_bias(const struct et_smaps *sm, size_t i, uint64_t *bias)
{
	if (!sm->attributed || i >= sm->count || !sm->vmas[i].owner || !sm->vmas[i].owner_elf)
		return false;
	*bias = sm->vmas[i].bias;
	return true;
}

/* fd's device and inode are the mapping's. */
static bool fd_is(int fd, const struct et_vma *v)
{
	struct stat st;
	return fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (uint64_t)st.st_ino == v->inode &&
	       major(st.st_dev) == v->dev_major && minor(st.st_dev) == v->dev_minor;
}

int et_smaps_mapped_file(const struct et_smaps *sm, const struct et_vma *v, const char *dir, char *buf,
                         size_t cap)
{
	const char *path = et_vma_path(sm, v);
	int err = -ENOENT;
	for (int how = dir ? 0 : 2; how < 3; how++) {
		int n;
		if (how == 0)
			n = snprintf(buf, cap, "%s/map_files/%llx-%llx", dir, (unsigned long long)v->start,
			             (unsigned long long)v->end);
		else if (path[0] != '/')
			continue;
		else if (how == 1)
			n = snprintf(buf, cap, "%s/root%s", dir, path);
		else
			n = snprintf(buf, cap, "%s", path);
		if (n < 0 || (size_t)n >= cap)
			continue;
		int fd = open(buf, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		if (fd < 0) {
			if (err == -ENOENT)
				err = -errno;
			continue;
		}
		/* map_files is the mapping's own file (on overlayfs its device
		 * may read otherwise); a name may now be another file */
		if (how == 0 || fd_is(fd, v))
			return fd;
		close(fd);
		err = -ESTALE;
	}
	return err;
}

/* What et_smaps_attribute keeps of one file: its PT_LOADs. */
#define ELF_LOADS 32

struct loads {
	enum { L_UNREAD, L_NONE, L_ELF } state;   /* L_NONE: read, no ELF of ours */
	unsigned n;
	struct {
		uint64_t off, vaddr, filesz, memsz;
		bool x;
	} seg[ELF_LOADS];
};

static void read_loads(const struct et_smaps *sm, const struct et_vma *v, const char *dir, struct loads *l)
{
	char path[PATH_MAX + 64];
	l->state = L_UNREAD;
	l->n = 0;
	int fd = et_smaps_mapped_file(sm, v, dir, path, sizeof path);
	if (fd < 0)
		return;
	ElfW(Ehdr) eh;
	if (!et_pread_all(fd, &eh, sizeof eh, 0)) {
		/* shorter than a header: read, and no ELF file */
		l->state = L_NONE;
		close(fd);
		return;
	}
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != (sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32) ||
	    (eh.e_type != ET_EXEC && eh.e_type != ET_DYN) || eh.e_phentsize != sizeof(ElfW(Phdr)) ||
	    eh.e_phnum == 0) {
		l->state = L_NONE;
		close(fd);
		return;
	}
	if (eh.e_phnum == PN_XNUM) {          /* the count in a section header: not for text */
		close(fd);
		return;
	}
	ElfW(Phdr) ph[16];
	for (unsigned i = 0; i < eh.e_phnum; i += 16) {
		unsigned k = eh.e_phnum - i < 16 ? eh.e_phnum - i : 16;
		if (!et_pread_all(fd, ph, k * sizeof *ph, eh.e_phoff + (uint64_t)i * sizeof *ph)) {
			close(fd);
			return;                 /* cut short: unread, not "no text" */
		}
		for (unsigned j = 0; j < k; j++) {
			if (ph[j].p_type != PT_LOAD)
				continue;
			if (l->n == ELF_LOADS) {
				close(fd);
				return;
			}
			l->seg[l->n].off = ph[j].p_offset;
			l->seg[l->n].vaddr = ph[j].p_vaddr;
			l->seg[l->n].filesz = ph[j].p_filesz;
			l->seg[l->n].memsz = ph[j].p_memsz;
			l->seg[l->n].x = (ph[j].p_flags & PF_X) != 0;
			l->n++;
		}
	}
	close(fd);
	l->state = L_ELF;
}

/* The load bias mapping v gives: its start less the address its file
 * offset has in the PT_LOAD that maps it — the one whose page-aligned
 * p_offset is that offset, else one that holds it (a mapping split by
 * mprotect, or what is left of a segment around a copy). */
static bool bias_of(const struct loads *l, const struct et_vma *v, uint64_t page, uint64_t *bias)
{
	int hold = -1;
	for (unsigned i = 0; i < l->n; i++) {
		uint64_t pg = l->seg[i].off & ~(page - 1);
		if (pg == v->offset) {
			*bias = v->start - (l->seg[i].vaddr & ~(page - 1));
			return true;
		}
		if (hold < 0 && pg < v->offset && v->offset < l->seg[i].off + l->seg[i].filesz)
			hold = (int)i;
	}
	if (hold < 0)
		return false;
	*bias = v->start - (l->seg[hold].vaddr + (v->offset - l->seg[hold].off));
	return true;
}

static uint64_t overlap(uint64_t a, uint64_t b, uint64_t c, uint64_t d)
{
	uint64_t lo = a > c ? a : c, hi = b < d ? b : d;
	return hi > lo ? hi - lo : 0;
}

void et_smaps_attribute(struct et_smaps *sm, const char *dir)
{
	if (!sm->mem)
		return;
	sm->attributed = true;
	sm->nranges = 0;
	bool any = false;
	for (size_t i = 0; i < sm->count; i++) {
		struct et_vma *v = &sm->vmas[i];
		v->owner = 0;
		v->owner_elf = v->text_known = false;
		any |= (v->prot & PROT_EXEC) && et_vma_is_anon(sm, v);
	}
	if (!any)
		return;                 /* nothing to attribute: no file read */
	long ps = sysconf(_SC_PAGESIZE);
	uint64_t page = ps > 0 ? (uint64_t)ps : 4096;
	/* The executable PT_LOADs of every file mapped, where they lie: the
	 * headers read once per run of one file's mappings, a range added once
	 * per (file, bias). */
	struct loads l = { .state = L_UNREAD, .n = 0 };
	const struct et_vma *cur = NULL, *last = NULL;
	uint64_t last_bias = 0;
	for (size_t i = 0; i < sm->count; i++) {
		struct et_vma *v = &sm->vmas[i];
		if (!et_vma_is_file(sm, v))
			continue;
		if (!cur || !same_file(sm, cur, v)) {
			read_loads(sm, v, dir, &l);
			cur = v;
		}
		uint64_t bias;
		if (l.state == L_NONE) {
			v->text_known = true;
			continue;
		}
		if (l.state != L_ELF || !bias_of(&l, v, page, &bias))
			continue;
		if (last && same_file(sm, last, v) && bias == last_bias) {
			v->text_known = true;
			continue;
		}
		unsigned nx = 0;
		for (unsigned k = 0; k < l.n; k++)
			nx += l.seg[k].x;
		if (sm->nranges + nx > sm->ranges_cap)
			continue;               /* no room: the neighbours decide */
		for (unsigned k = 0; k < l.n; k++) {
			if (!l.seg[k].x || !l.seg[k].memsz)
				continue;
			struct et_text_range *r = &sm->ranges[sm->nranges++];
			r->lo = bias + (l.seg[k].vaddr & ~(page - 1));
			r->hi = bias + ((l.seg[k].vaddr + l.seg[k].memsz + page - 1) & ~(page - 1));
			r->bias = bias;
			r->vma = (uint32_t)i;
		}
		v->text_known = true;
		last = v;
		last_bias = bias;
	}
	/* Each anonymous executable mapping: the range it overlaps most. */
	for (size_t i = 0; i < sm->count; i++) {
		struct et_vma *v = &sm->vmas[i];
		if (!(v->prot & PROT_EXEC) || !et_vma_is_anon(sm, v))
			continue;
		const struct et_text_range *best = NULL;
		uint64_t most = 0;
		for (size_t k = 0; k < sm->nranges; k++) {
			uint64_t o = overlap(v->start, v->end, sm->ranges[k].lo, sm->ranges[k].hi);
			if (o > most) {
				most = o;
				best = &sm->ranges[k];
			}
		}
		if (best) {
			v->owner = best->vma + 1;
			v->bias = best->bias;
			v->owner_elf = true;
			continue;
		}
		const struct et_vma *a = by_neighbours(sm, i);
		if (a)
			v->owner = (uint32_t)(a - sm->vmas) + 1;
	}
}

int et_smaps_read_self(struct et_smaps *sm)
{
	int e = et_smaps_read(sm, "/proc/thread-self/smaps");
	if (e == -ENOENT)
		e = et_smaps_read(sm, "/proc/self/smaps");
	return e;
}
