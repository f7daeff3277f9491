/*
 * core/smaps.c — the mappings of a process and what backs them, from
 * /proc/PID/smaps: the only place that says whether a range really sits on
 * huge pages (AnonHugePages, FilePmdMapped, ShmemPmdMapped, *_Hugetlb).
 *
 * Parsed with read(2) into a scratch mapping: no stdio, no malloc.  The
 * tables are sized for the kernel's maximum map count but only the pages
 * touched cost memory.
 *
 * Owns: the smaps text format.
 * May call: core (util: scratch memory).
 * Never: judges what it reads (runtime/verify.c does).
 */
#include "core/smaps.h"

#include "core/util.h"
#include "os/os.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define VMA_CAP   65536u
#define POOL_CAP  (8u << 20)
#define READ_BUF  (64u << 10)

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
	sm->mem_len = VMA_CAP * sizeof(struct et_vma) + POOL_CAP + READ_BUF;
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

static const struct et_vma *nearest_file(const struct et_smaps *sm, size_t i, int d)
{
	for (size_t j = i + (size_t)d; j < sm->count; j += (size_t)d)   /* i - 1 wraps past count */
		if (et_vma_is_file(sm, &sm->vmas[j]))
			return &sm->vmas[j];
	return NULL;
}

const struct et_vma *et_smaps_copied_from(const struct et_smaps *sm, size_t i)
{
	const struct et_vma *a = nearest_file(sm, i, -1), *b = nearest_file(sm, i, +1);
	if (a && b && a->inode == b->inode && !strcmp(et_vma_path(sm, a), et_vma_path(sm, b)))
		return a;
	return NULL;
}

int et_smaps_read_self(struct et_smaps *sm)
{
	int e = et_smaps_read(sm, "/proc/thread-self/smaps");
	if (e == -ENOENT)
		e = et_smaps_read(sm, "/proc/self/smaps");
	return e;
}
