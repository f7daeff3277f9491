/*
 * tools/enormoustext/cmd/compare_counters.c — where `compare` can count iTLB
 * misses: the hardware PMU (perf_event_open: instructions, the generic
 * iTLB read-miss event, and the vendor's completed-walk event where this
 * CPU is one we know), else the model (itlbgrind under Valgrind, for the
 * core this CPU is); and whether a command can be run at all.
 *
 * Owns: the counters' attributes and why they cannot be had (in words);
 * finding the model and the core it counts for; reading /proc/cpuinfo.
 * May call: common.c (small files read).
 * Never: runs COMMAND (compare_run.c does); opens a counter on another
 * process than this one except through et_compare_perf_open.
 */
#include "compare.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int et_compare_perf_open(struct perf_event_attr *a, pid_t pid)
{
	return (int)syscall(SYS_perf_event_open, a, pid, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

/* ------------------------------------------------------------ PMU */

/* This CPU, from /proc/cpuinfo (the first CPU's lines): the x86 vendor,
 * family and model, or on Arm vendor "ARM" (implementer 0x41) with the CPU
 * part as the model; -1 where absent. */
struct cpu_id {
	char vendor[64];
	int family, model;
};

static void cpu_id_read(struct cpu_id *id)
{
	char buf[256];
	id->vendor[0] = '\0';
	id->family = id->model = -1;
	FILE *f = fopen("/proc/cpuinfo", "re");
	if (!f)
		return;
	while (fgets(buf, sizeof buf, f)) {
		if (!buf[0] || buf[0] == '\n')
			break;   /* the first CPU's lines only */
		if (!id->vendor[0])
			sscanf(buf, "vendor_id : %63s", id->vendor);
		if (id->family < 0)
			sscanf(buf, "cpu family : %d", &id->family);
		if (id->model < 0 && !strncmp(buf, "model\t", 6))
			sscanf(buf, "model : %d", &id->model);
		if (!strncmp(buf, "CPU implementer", 15) && strstr(buf, "0x41"))
			snprintf(id->vendor, sizeof id->vendor, "ARM");
		unsigned part = 0;
		if (!strncmp(buf, "CPU part", 8) && sscanf(buf, "CPU part : %x", &part) == 1)
			id->model = (int)part;
	}
	fclose(f);
}

/* The name of an errno perf_event_open gives ("ENOENT"), or its text. */
static const char *errno_name(int e)
{
	switch (e) {
	case ENOENT: return "ENOENT";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case ENODEV: return "ENODEV";
	case EACCES: return "EACCES";
	case EPERM: return "EPERM";
	case EINVAL: return "EINVAL";
	case ENOSYS: return "ENOSYS";
	default: return strerror(e);
	}
}

/* Why the hardware counters cannot be had, as a sentence (p->why): no PMU
 * (ENOENT, EOPNOTSUPP, ENODEV for a hardware event: a VM without a virtual
 * PMU, a kernel without its driver), refused (the paranoid setting), or
 * the error itself. */
static void pmu_why(struct pmu *p, int e, const char *event)
{
	if (e == ENOENT || e == EOPNOTSUPP || e == ENODEV) {
		snprintf(p->why, sizeof p->why,
		         "this machine has no hardware PMU counters (perf_event_open: %s for hardware events: "
		         "a VM without a virtual PMU?)", errno_name(e));
	} else if (e == EACCES || e == EPERM) {
		char par[16];
		if (et_tool_read("/proc/sys/kernel/perf_event_paranoid", par, sizeof par) <= 0)
			snprintf(par, sizeof par, "?");
		snprintf(p->why, sizeof p->why,
		         "the hardware PMU counters are refused to this process (perf_event_open: %s; "
		         "kernel.perf_event_paranoid is %s: 2 or less lets a user count their own programs)",
		         errno_name(e), par);
	} else {
		snprintf(p->why, sizeof p->why, "the hardware PMU counters cannot be opened (perf_event_open: %s "
		         "for the hardware event '%s')", errno_name(e), event);
	}
}

/* The hardware counters: instructions and the generic iTLB read misses
 * must open on this process (else pmu->why says why), and the vendor's
 * completed-walk event where the CPU is one we know. */
void et_compare_pmu_probe(struct pmu *p)
{
	memset(p, 0, sizeof *p);
	for (int c = 0; c < C_N; c++) {
		struct perf_event_attr *a = &p->attr[c];
		a->size = sizeof *a;
		a->disabled = 1;
		a->enable_on_exec = 1;
		a->inherit = 1;
		a->exclude_kernel = 1;
		a->exclude_hv = 1;
		a->read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	}
	p->attr[C_INSTR].type = PERF_TYPE_HARDWARE;
	p->attr[C_INSTR].config = PERF_COUNT_HW_INSTRUCTIONS;
	p->event[C_INSTR] = "instructions";
	p->attr[C_ITLB].type = PERF_TYPE_HW_CACHE;
	p->attr[C_ITLB].config = PERF_COUNT_HW_CACHE_ITLB | (PERF_COUNT_HW_CACHE_OP_READ << 8) |
	                         (PERF_COUNT_HW_CACHE_RESULT_MISS << 16);
	p->event[C_ITLB] = "iTLB-load-misses";
	p->have[C_INSTR] = p->have[C_ITLB] = true;
	for (int c = 0; c <= C_ITLB; c++) {
		struct perf_event_attr a = p->attr[c];
		a.enable_on_exec = 0;
		int fd = et_compare_perf_open(&a, 0);
		if (fd < 0) {
			pmu_why(p, errno, p->event[c]);
			return;
		}
		close(fd);
	}
	/* the vendor's walk event, raw, on the core PMU ("cpu", or on a
	 * hybrid part "cpu_core") */
	struct cpu_id id;
	cpu_id_read(&id);
	const char *vendor = id.vendor;
	const int family = id.family;
	uint64_t raw = 0;
	if (!strcmp(vendor, "GenuineIntel") && family == 6) {
		raw = 0x0e85;   /* ITLB_MISSES.WALK_COMPLETED: event 0x85, umask 0x0e (Haswell on) */
		p->event[C_WALK] = "itlb_misses.walk_completed";
	} else if (!strcmp(vendor, "AuthenticAMD") && family >= 0x17) {
		raw = 0xff85;   /* BP_L1_TLB_MISS_L2_TLB_MISS: event 0x85, umask 0xff (Zen) */
		p->event[C_WALK] = "bp_l1_tlb_miss_l2_tlb_miss";
	}
	if (raw) {
		uint32_t type = PERF_TYPE_RAW;
		char t[32];
		if (et_tool_read("/sys/bus/event_source/devices/cpu_core/type", t, sizeof t) > 0)
			type = (uint32_t)strtoul(t, NULL, 10);
		p->attr[C_WALK].type = type;
		p->attr[C_WALK].config = raw;
		struct perf_event_attr a = p->attr[C_WALK];
		a.enable_on_exec = 0;
		int fd = et_compare_perf_open(&a, 0);
		if (fd >= 0) {
			close(fd);
			p->have[C_WALK] = true;
		}
	}
	p->ok = true;
}

/* Can COMMAND be executed, found as execvp finds it?  errno says why not. */
bool et_compare_runnable(const char *cmd)
{
	if (strchr(cmd, '/'))
		return access(cmd, X_OK) == 0;
	const char *path = getenv("PATH");
	char *copy = strdup(path && *path ? path : "/usr/local/bin:/bin:/usr/bin");
	int err = ENOENT;
	bool ok = false;
	for (char *save = NULL, *d = copy ? strtok_r(copy, ":", &save) : NULL; d && !ok;
	     d = strtok_r(NULL, ":", &save)) {
		char p[PATH_MAX];
		if (snprintf(p, sizeof p, "%s/%s", d, cmd) >= (int)sizeof p)
			continue;
		if (access(p, X_OK) == 0)
			ok = true;
		else if (errno == EACCES)
			err = EACCES;
	}
	free(copy);
	if (!ok)
		errno = err;
	return ok;
}

/* ------------------------------------------------------------ model */

static bool tool_in(const char *dir)
{
	char p[PATH_MAX];
	snprintf(p, sizeof p, "%s/itlbgrind-amd64-linux", dir);
	return access(p, X_OK) == 0;
}

/* The core the model counts for: this CPU's where it is one of the model's. */
static void pick_core(char *out, size_t cap)
{
	struct cpu_id id;
	cpu_id_read(&id);
	const char *vendor = id.vendor;
	const int family = id.family, model = id.model;
	const char *c = "goldencove";
	if (!strcmp(vendor, "GenuineIntel") && family == 6) {
		switch (model) {
		case 85: case 94: case 78: case 142: case 158: case 165: c = "skylake"; break;
		default: c = "goldencove"; break;
		}
	} else if (!strcmp(vendor, "AuthenticAMD")) {
		c = family == 0x19 && model >= 0x10 ? "zen4" : family >= 0x17 && family < 0x1a ? "zen3" : "zen4";
	} else if (!strcmp(vendor, "ARM")) {
		c = model == 0xd0c ? "neoverse-n1" : model == 0xd40 ? "neoverse-v1" : model == 0xd4f ? "neoverse-v2" : "neoverse-n1";
	}
	snprintf(out, cap, "%s", c);
}

void et_compare_model_find(struct model *m, const char *core)
{
	memset(m, 0, sizeof *m);
	if (core)
		snprintf(m->core, sizeof m->core, "%s", core);
	else
		pick_core(m->core, sizeof m->core);
	const char *env = getenv("ITLBGRIND_LIB");
	static const char *const dirs[] = { "/usr/libexec/valgrind", "/usr/lib/x86_64-linux-gnu/valgrind",
		                            "/usr/lib64/valgrind", "/usr/lib/valgrind", "/usr/local/libexec/valgrind",
		                            "/usr/local/lib/valgrind" };
	bool found = false;
	if (env && *env) {
		if (!tool_in(env)) {
			snprintf(m->why, sizeof m->why, "ITLBGRIND_LIB=%.120s holds no itlbgrind-amd64-linux", env);
			return;
		}
		snprintf(m->lib, sizeof m->lib, "%s", env);
		found = true;
	}
	for (size_t i = 0; !found && i < sizeof dirs / sizeof *dirs; i++)
		if (tool_in(dirs[i]))
			found = true;   /* valgrind finds it itself */
#if defined(ET_TOOL_BUILD_EXE) && defined(ET_TOOL_BUILD_VGLIB)
	if (!found) {
		char exe[PATH_MAX];
		ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
		exe[n > 0 ? n : 0] = '\0';
		if (!strcmp(exe, ET_TOOL_BUILD_EXE) && tool_in(ET_TOOL_BUILD_VGLIB)) {
			snprintf(m->lib, sizeof m->lib, "%s", ET_TOOL_BUILD_VGLIB);
			found = true;
		}
	}
#endif
	if (!found) {
		snprintf(m->why, sizeof m->why,
		         "itlbgrind is not installed (the enormoustext-itlbgrind package; or set ITLBGRIND_LIB)");
		return;
	}
	if (!et_compare_runnable("valgrind")) {
		snprintf(m->why, sizeof m->why, "valgrind is not installed (itlbgrind is a Valgrind tool)");
		return;
	}
	m->ok = true;
}
