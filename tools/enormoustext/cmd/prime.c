/*
 * tools/enormoustext/cmd/prime.c — `enormoustext prime FILE...`: bring a program's text into the page cache as huge folios, so
 * that the kernel maps it huge by itself (pagecache.c does, window by
 * window; --check only looks).
 *
 * Owns: `prime`: its options, and the report per file (text, JSON).
 * May call: pagecache.c, core (sysinfo: the PMD size; json), progress.c
 * (the line on a terminal while several files are primed), msg.c,
 * common.c.
 * Never: changes a file, or drops a page a process has mapped or that is
 * dirty (pagecache.c never does).
 */
#include "tool.h"
#include "opts.h"
#include "pagecache.h"
#include "progress.h"

#include <string.h>

enum { O_CHECK = 1, O_JSON };

static const struct et_opt options[] = {
	{ "check", 'c', NULL, "only report the current state; read and drop nothing", O_CHECK, 0, 0, 0, NULL, 0 },
	{ "json", 'j', NULL, "one JSON document on stdout", O_JSON, 0, 0, 0, NULL, 0 },
	{ NULL, 0, NULL, NULL, 0, 0, 0, 0, NULL, 0 },
};

static const struct et_cmd_spec spec = {
	.name = "prime",
	.forms = { { NULL, "FILE..." } },
	.about = "Bring the executable text of each ELF FILE (program or shared library) into\n"
	         "the page cache as huge (PMD-sized) folios, so that every process that maps\n"
	         "it gets huge text straight from the file: nothing copied, the pages shared.\n"
	         "Works on the windows of the text whose file offset and load address agree\n"
	         "modulo the huge page size (linked with enormous.ld, or shared libraries of\n"
	         "2 MiB or more).  The file's contents are never changed; no root needed.\n",
	.sections = { { NULL, options, NULL } },
	.tail = "Per file: how many windows are now huge in the page cache, and for the\n"
	        "others why not (not congruent, pages held by running processes - named by\n"
	        "PID -, filesystem without huge folios, file open for writing).\n"
	        "\n"
	        "Exit status: 0 every FILE was examined; 1 a FILE could not be read or is not\n"
	        "an ELF file with an executable segment; 2 usage error.\n",
	.operand = ET_COMP_FILE,
};

const struct et_cmd_spec *et_cmd_prime_spec(void)
{
	return &spec;
}

static const char *state_key[ET_WIN_FAILED + 1] = {
	"huge_before", "primed", "not_cached", "small", "held", "no_huge_folios", "no_room", "open_for_writing",
	"failed",
};

static void print_text(const struct et_tool_primed *r, bool check, uint64_t H)
{
	char hb[16];
	et_tool_size(hb, sizeof hb, H);
	uint64_t huge = r->n[ET_WIN_HUGE_BEFORE] + r->n[ET_WIN_PRIMED];
	printf("%s: %llu of %llu window%s of %s huge in the page cache", r->path,
	       (unsigned long long)(r->congruent ? huge : 0), (unsigned long long)r->windows,
	       et_tool_s(r->windows), hb);
	if (!check && r->congruent && r->collapsed)
		printf(" (%llu primed now, %llu of them collapsed in place; %llu already)",
		       (unsigned long long)r->n[ET_WIN_PRIMED], (unsigned long long)r->collapsed,
		       (unsigned long long)r->n[ET_WIN_HUGE_BEFORE]);
	else if (!check && r->congruent)
		printf(" (%llu primed now, %llu already)", (unsigned long long)r->n[ET_WIN_PRIMED],
		       (unsigned long long)r->n[ET_WIN_HUGE_BEFORE]);
	printf("\n");
	if (!r->windows) {
		char tb[16];
		printf("  no whole %s window in its text (%s of text)\n", hb,
		       et_tool_size(tb, sizeof tb, r->text_len));
		return;
	}
	if (!r->congruent) {
		printf("  not congruent: its text's file offset and address differ modulo %s, so the\n"
		       "  kernel can never map it huge from the file (link with enormous.ld, or\n"
		       "  -z max-page-size=%#llx -z separate-code)\n", hb, (unsigned long long)H);
		return;
	}
	if (r->random_base)
		printf("  a PIE executable with p_align %#llx: it loads at a random address where its windows\n"
		       "  line up with 2M pages only by chance; relink with -z max-page-size=%#llx (or enormous.ld)\n",
		       (unsigned long long)r->max_align, (unsigned long long)H);
	if (r->n[ET_WIN_NOT_CACHED])
		printf("  %llu not (wholly) cached: they come in huge when read through a huge mapping\n",
		       (unsigned long long)r->n[ET_WIN_NOT_CACHED]);
	if (r->n[ET_WIN_SMALL])
		printf("  %llu cached in small pages\n", (unsigned long long)r->n[ET_WIN_SMALL]);
	if (r->n[ET_WIN_HELD])
		printf("  %llu held in small pages by %s\n", (unsigned long long)r->n[ET_WIN_HELD],
		       r->npids ? "running processes" : "someone (mapped by a process this user cannot see?)");
	if (r->npids) {
		printf("  mapped by PID");
		for (int i = 0; i < r->npids; i++)
			printf(" %d", (int)r->pids[i]);
		printf("%s (restart them, then prime again)\n", r->more_pids ? " and more" : "");
	}
	if (r->n[ET_WIN_NO_FOLIOS])
		printf("  %llu stayed small after reading back: this filesystem gives no huge folios\n",
		       (unsigned long long)r->n[ET_WIN_NO_FOLIOS]);
	if (r->n[ET_WIN_NO_ROOM])
		printf("  %llu stayed small: no free huge page could be made for them now (memory in small\n"
		       "  pieces that compaction cannot join); prime again later\n",
		       (unsigned long long)r->n[ET_WIN_NO_ROOM]);
	if (r->n[ET_WIN_WRITING])
		printf("  %llu left alone: the file is open for writing by a process\n",
		       (unsigned long long)r->n[ET_WIN_WRITING]);
	if (r->n[ET_WIN_FAILED])
		printf("  %llu failed: %s\n", (unsigned long long)r->n[ET_WIN_FAILED], strerror(r->err));
}

static void print_json(struct et_json *j, const struct et_tool_primed *r)
{
	et_json_obj(j, NULL);
	et_json_str(j, "path", r->path);
	et_json_u64(j, "text_offset", r->text_off);
	et_json_u64(j, "text_bytes", r->text_len);
	et_json_bool(j, "congruent", r->congruent);
	et_json_bool(j, "random_load_address", r->random_base);
	et_json_u64(j, "windows", r->windows);
	et_json_u64(j, "huge", r->n[ET_WIN_HUGE_BEFORE] + r->n[ET_WIN_PRIMED]);
	et_json_u64(j, "collapsed", r->collapsed);
	for (int s = 0; s <= ET_WIN_FAILED; s++)
		et_json_u64(j, state_key[s], r->n[s]);
	if (r->n[ET_WIN_FAILED])
		et_json_str(j, "error", strerror(r->err));
	et_json_arr(j, "pids");
	for (int i = 0; i < r->npids; i++)
		et_json_i64(j, NULL, r->pids[i]);
	et_json_arr_end(j);
	et_json_obj_end(j);
}

int et_cmd_prime(int argc, char **argv)
{
	bool check = false, json = false;
	struct et_args a;
	et_args_init(&a, &spec, argc, argv);
	int c;
	while ((c = et_args_next(&a)) > 0) {
		switch (c) {
		case O_CHECK: check = true; break;
		case O_JSON: json = true; break;
		}
	}
	if (c < 0)
		return et_args_exit(c);
	if (!a.nops)
		return et_tool_usage("give at least one FILE");
	struct et_sysinfo si;
	et_sysinfo_read_pmd(&si, "/");
	const uint64_t H = si.pmd_size;
	int rc = ET_EXIT_OK;
	/* several files: which one, on a terminal (before stdout is taken) */
	struct et_progress line;
	et_progress_start(&line, "prime");
	if (a.nops < 2)
		et_progress_end(&line);
	struct et_json j;
	if (json) {
		et_json_init(&j, stdout);
		et_json_obj(&j, NULL);
		et_json_u64(&j, "pmd_size", H);
		et_json_bool(&j, "check", check);
		et_json_arr(&j, "files");
	}
	for (int i = 0; i < a.nops; i++) {
		struct et_tool_primed r;
		et_progress_show(&line, true, "file %d of %d, %.1f s: %s", i + 1, a.nops, et_progress_elapsed(&line),
		                 a.ops[i]);
		if (et_tool_prime_file(a.ops[i], H, check, &r) != 0) {
			rc = ET_EXIT_BAD;
			continue;
		}
		if (json)
			print_json(&j, &r);
		else
			print_text(&r, check, H);
	}
	if (json) {
		et_json_arr_end(&j);
		/* what the first window primed found out (pagecache.c) */
		int err = 0, works = et_tool_collapse_file_text(&err);
		et_json_obj(&j, "collapse_file_text");
		if (works < 0)
			et_json_null(&j, "works");
		else
			et_json_bool(&j, "works", works == 1);
		if (works == 0)
			et_json_str(&j, "error", strerror(err));
		et_json_obj_end(&j);
		et_json_obj_end(&j);
		et_json_end(&j);
	}
	/* (after the last write to stdout: the JSON writer holds the stream) */
	et_progress_end(&line);
	return rc;
}
