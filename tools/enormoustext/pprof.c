/*
 * tools/enormoustext/pprof.c — pprof profiles (profile.proto) for `profile
 * import`: decoded by protobuf-c (the C generated at build time from
 * profile.proto here), checked, and counted through attrib.c.
 *
 * Each sample counts its chosen value (the sample type named by --value,
 * else the first whose unit is "count": by pprof's convention the number
 * of samples) at its leaf location (location_id[0]), whose address lies in
 * a mapping (the location's mapping_id, else the mapping whose range holds
 * it): file offset = address - memory_start + file_offset, and the
 * mapping's build_id (hex) keys the object.  Mappings that are no file
 * ([vdso], the kernel, "") and locations without an address count as
 * outside any file.  --pid and --comm select by the sample labels "pid"
 * (a number) and "comm" (a string).
 *
 * Owns: reading pprof.  May call: attrib.c, protobuf-c, msg.c.
 * Never: trusts an index or id of the file (each is looked up, a missing
 * one is an error naming the file).
 */
#include "attrib.h"
#include "pprof.h"

#include "profile.pb-c.h"

#include <stdlib.h>
#include <string.h>

struct idx {
	uint64_t id;
	size_t i;
};

static int by_id(const void *a, const void *b)
{
	const struct idx *x = a, *y = b;
	return x->id < y->id ? -1 : x->id > y->id;
}

static const struct idx *find(const struct idx *t, size_t n, uint64_t id)
{
	size_t a = 0, b = n;
	while (a < b) {
		size_t m = a + (b - a) / 2;
		if (t[m].id < id)
			a = m + 1;
		else
			b = m;
	}
	return a < n && t[a].id == id ? &t[a] : NULL;
}

/* A table of ids, sorted; a duplicate or zero id is refused. */
static struct idx *index_ids(const char *name, const char *what, size_t n, uint64_t (*id)(const void *, size_t),
                             const void *arr)
{
	struct idx *t = malloc((n ? n : 1) * sizeof *t);
	if (!t) {
		et_tool_err("out of memory");
		return NULL;
	}
	for (size_t i = 0; i < n; i++)
		t[i] = (struct idx){ id(arr, i), i };
	qsort(t, n, sizeof *t, by_id);
	for (size_t i = 0; i < n; i++)
		if (!t[i].id || (i && t[i].id == t[i - 1].id)) {
			et_tool_err("%s: not a valid pprof profile: %s id %llu %s", name, what,
			            (unsigned long long)t[i].id, t[i].id ? "twice" : "(ids are nonzero)");
			free(t);
			return NULL;
		}
	return t;
}

static uint64_t mapping_id(const void *a, size_t i)
{
	return ((Perftools__Profiles__Mapping *const *)a)[i]->id;
}

static uint64_t location_id(const void *a, size_t i)
{
	return ((Perftools__Profiles__Location *const *)a)[i]->id;
}

/* Hex of 1 to 20 bytes, lower-cased into out; false for anything else
 * (a build-id that is not a GNU one: the file's own is used). */
static bool hex_build_id(const char *s, char out[41])
{
	size_t n = strlen(s);
	if (n < 2 || n > 40 || n % 2)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (c >= 'A' && c <= 'F')
			c = (char)(c - 'A' + 'a');
		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
			return false;
		out[i] = c;
	}
	out[n] = '\0';
	return true;
}

int et_pprof_import(const char *name, const uint8_t *buf, size_t len, struct et_import_filter *flt)
{
	Perftools__Profiles__Profile *p = perftools__profiles__profile__unpack(NULL, len, buf);
	if (!p) {
		et_tool_err("%s: not a perf.data file, `perf script` text or a pprof profile (as protobuf it "
		            "does not decode: corrupt or truncated?)", name);
		return -1;
	}
	int rc = -1;
	struct idx *mi = NULL, *li = NULL;
	int *mfile = NULL;
	size_t ns = p->n_string_table;
	char *const *st = p->string_table;
#define STR_OK(i) ((i) >= 0 && (uint64_t)(i) < ns)
	if (!ns || st[0][0]) {
		et_tool_err("%s: not a pprof profile (its string table does not start with \"\")", name);
		goto out;
	}
	/* the value to count */
	size_t vi = p->n_sample_type;
	for (size_t i = 0; i < p->n_sample_type; i++) {
		const Perftools__Profiles__ValueType *v = p->sample_type[i];
		if (!STR_OK(v->type) || !STR_OK(v->unit)) {
			et_tool_err("%s: not a valid pprof profile: sample type %zu names no string", name, i);
			goto out;
		}
		if (vi == p->n_sample_type &&
		    (flt->value ? !strcmp(st[v->type], flt->value) : !strcmp(st[v->unit], "count")))
			vi = i;
	}
	if (vi == p->n_sample_type) {
		char types[200] = "";
		size_t o = 0;
		for (size_t i = 0; i < p->n_sample_type && o < sizeof types; i++)
			o += (size_t)snprintf(types + o, sizeof types - o, "%s%s/%s", i ? ", " : "",
			                      st[p->sample_type[i]->type], st[p->sample_type[i]->unit]);
		if (flt->value)
			et_tool_err("%s: no sample type '%s' (it has: %s)", name, flt->value, p->n_sample_type ? types : "none");
		else
			et_tool_err("%s: no sample type counts samples (unit \"count\"): choose one with --value "
			            "(it has: %s)", name, p->n_sample_type ? types : "none");
		goto out;
	}
	mi = index_ids(name, "mapping", p->n_mapping, mapping_id, p->mapping);
	li = mi ? index_ids(name, "location", p->n_location, location_id, p->location) : NULL;
	mfile = calloc(p->n_mapping ? p->n_mapping : 1, sizeof *mfile);
	if (!mi || !li || !mfile) {
		if (mi && li)
			et_tool_err("out of memory");
		goto out;
	}
	for (size_t i = 0; i < p->n_mapping; i++) {
		const Perftools__Profiles__Mapping *m = p->mapping[i];
		if (!STR_OK(m->filename) || !STR_OK(m->build_id) || m->memory_limit < m->memory_start) {
			et_tool_err("%s: not a valid pprof profile: mapping %llu %s", name, (unsigned long long)m->id,
			            m->memory_limit < m->memory_start ? "ends before it starts" : "names no string");
			goto out;
		}
		char bid[41];
		const char *path = st[m->filename];
		mfile[i] = path[0] == '/' ? et_attr_file(path, hex_build_id(st[m->build_id], bid) ? bid : NULL) : -1;
	}
	uint64_t pid_key_hits = 0;
	for (size_t s = 0; s < p->n_sample; s++) {
		const Perftools__Profiles__Sample *sm = p->sample[s];
		if (sm->n_value != p->n_sample_type) {
			et_tool_err("%s: not a valid pprof profile: sample %zu has %zu values for %zu sample types", name, s,
			            sm->n_value, p->n_sample_type);
			goto out;
		}
		int64_t v = sm->value[vi];
		if (v < 0) {
			et_tool_err("%s: sample %zu counts %lld (a count below 0)", name, s, (long long)v);
			goto out;
		}
		bool keep = true;
		if (flt->pid_set || flt->comm) {
			bool pid_ok = !flt->pid_set, comm_ok = !flt->comm;
			for (size_t l = 0; l < sm->n_label; l++) {
				const Perftools__Profiles__Label *lb = sm->label[l];
				if (!STR_OK(lb->key) || !STR_OK(lb->str)) {
					et_tool_err("%s: not a valid pprof profile: a label of sample %zu names no string", name, s);
					goto out;
				}
				if (!strcmp(st[lb->key], "pid")) {
					pid_key_hits++;
					pid_ok = pid_ok || (lb->num >= 0 && (uint64_t)lb->num == flt->pid);
				} else if (!strcmp(st[lb->key], "comm")) {
					pid_key_hits++;
					comm_ok = comm_ok || !strncmp(st[lb->str], flt->comm, 15);
				}
			}
			keep = pid_ok && comm_ok;
		}
		if (!v)
			continue;
		if (!keep) {
			flt->dropped += (uint64_t)v;
			continue;
		}
		flt->kept += (uint64_t)v;
		if (!sm->n_location_id) {
			et_attr_outside((uint64_t)v);
			continue;
		}
		const struct idx *lx = find(li, p->n_location, sm->location_id[0]);
		if (!lx) {
			et_tool_err("%s: not a valid pprof profile: sample %zu names location %llu, which it does not have",
			            name, s, (unsigned long long)sm->location_id[0]);
			goto out;
		}
		const Perftools__Profiles__Location *loc = p->location[lx->i];
		size_t m = p->n_mapping;
		if (loc->mapping_id) {
			const struct idx *mx = find(mi, p->n_mapping, loc->mapping_id);
			if (!mx) {
				et_tool_err("%s: not a valid pprof profile: location %llu names mapping %llu, which it does "
				            "not have", name, (unsigned long long)loc->id, (unsigned long long)loc->mapping_id);
				goto out;
			}
			m = mx->i;
		} else {
			for (size_t k = 0; k < p->n_mapping && m == p->n_mapping; k++)
				if (loc->address >= p->mapping[k]->memory_start && loc->address < p->mapping[k]->memory_limit)
					m = k;
		}
		const Perftools__Profiles__Mapping *mp = m < p->n_mapping ? p->mapping[m] : NULL;
		if (!mp || mfile[m] < 0 || !loc->address || loc->address < mp->memory_start ||
		    loc->address >= mp->memory_limit) {
			et_attr_outside((uint64_t)v);
			continue;
		}
		et_attr_offset(mfile[m], loc->address - mp->memory_start + mp->file_offset, (uint64_t)v);
	}
	if ((flt->pid_set || flt->comm) && !pid_key_hits && p->n_sample) {
		et_tool_err("%s: its samples have no \"%s\" label: %s cannot select among them", name,
		            flt->pid_set ? "pid" : "comm", flt->pid_set ? "--pid" : "--comm");
		goto out;
	}
	rc = 0;
#undef STR_OK
out:
	free(mi);
	free(li);
	free(mfile);
	perftools__profiles__profile__free_unpacked(p, NULL);
	return rc;
}
