/*
 * explain.h — `status --explain [PROGRAM]` (explain.c): what to do on this
 * host, in sentences, each from a fact host.c has read or probed.
 */
#ifndef ET_TOOL_EXPLAIN_H
#define ET_TOOL_EXPLAIN_H

#include "host.h"

/* The sentences of s (and of PROGRAM, its libraries and their page cache);
 * into j when not NULL (the "explain" member of status's object), else as
 * text on stdout.  ET_EXIT_OK, or ET_EXIT_BAD after one line when PROGRAM
 * cannot be read. */
int et_tool_explain(const struct et_tool_host *s, const char *program, struct et_json *j);

#endif
