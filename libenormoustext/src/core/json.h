/*
 * core/json.h — THE JSON writer (json.c): the library's report
 * (ENORMOUSTEXT_REPORT) and every --json of the command.  Streaming: values
 * are written as they come; commas, indentation and escaping are its own.
 * No malloc, no stdio stream: it writes through an et_sink (util.h).
 */
#ifndef ET_CORE_JSON_H
#define ET_CORE_JSON_H

#include "core/util.h"

#define ET_JSON_MAX_DEPTH 32   /* deeper containers are not indented further */

/* Keys are given for members of objects, NULL for elements of arrays and
 * for the top-level value.  Layout: each member or element of a container
 * on a line of its own, indented two spaces a level ("[]" or "{}" when it
 * has none); a container opened with et_json_obj_flat, and everything in
 * it, on one line, members separated by ", ". */
struct et_json {
	struct et_sink out;
	int depth;                 /* 0: the top level */
	uint32_t more;             /* bit d: the container at depth d has a member already */
	uint32_t flat;             /* bit d: the container at depth d is on one line */
};

/* Start a document written to out (copied: its buffer, if any, stays the
 * caller's and must outlive the writer). */
ET_HIDDEN void et_json_begin(struct et_json *j, const struct et_sink *out);
ET_HIDDEN void et_json_obj(struct et_json *j, const char *key);
ET_HIDDEN void et_json_obj_flat(struct et_json *j, const char *key);
ET_HIDDEN void et_json_obj_end(struct et_json *j);
ET_HIDDEN void et_json_arr(struct et_json *j, const char *key);
ET_HIDDEN void et_json_arr_end(struct et_json *j);
/* A string (NULL: null).  Valid JSON whatever the bytes: '"' and '\' are
 * escaped with a backslash, control characters (and DEL) as \u00XX, and
 * so is every byte that does not belong to a valid UTF-8 sequence (paths
 * are bytes, not necessarily UTF-8: such a byte reads as its Latin-1
 * character); valid UTF-8 passes as it is. */
ET_HIDDEN void et_json_str(struct et_json *j, const char *key, const char *val);
ET_HIDDEN void et_json_u64(struct et_json *j, const char *key, uint64_t v);
ET_HIDDEN void et_json_i64(struct et_json *j, const char *key, int64_t v);
/* v as the string "0x..." (an address: JSON numbers lose precision past 2^53). */
ET_HIDDEN void et_json_hex(struct et_json *j, const char *key, uint64_t v);
ET_HIDDEN void et_json_bool(struct et_json *j, const char *key, bool v);
/* v thousandths as a decimal number with three places (1234 -> 1.234,
 * -5 -> -0.005): ratios and seconds without floating point here. */
ET_HIDDEN void et_json_milli(struct et_json *j, const char *key, int64_t v);
ET_HIDDEN void et_json_null(struct et_json *j, const char *key);
/* Ends the document with a newline, and flushes the sink. */
ET_HIDDEN void et_json_end(struct et_json *j);

#endif
