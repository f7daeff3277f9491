/*
 * tools/enormoustext/msg.c — the messages every part of the command
 * shares: one line on stderr, "enormoustext CMD: ...", for a bad input
 * (et_tool_err) or a usage error (et_tool_usage; opts.c's parser says
 * which option).
 *
 * Owns: et_tool_cmd (the subcommand running, set by main.c) and the
 * shape of those lines.
 * May call: libc (stdio).
 * Never: exits, or writes more than one line a message.
 */
#include "tool.h"

#include <stdarg.h>
#include <stdio.h>

const char *et_tool_cmd = NULL;

static void vmsg(const char *fmt, va_list ap)
{
	char line[2048];
	vsnprintf(line, sizeof line, fmt, ap);
	if (et_tool_cmd)
		fprintf(stderr, "enormoustext %s: %s\n", et_tool_cmd, line);
	else
		fprintf(stderr, "enormoustext: %s\n", line);
}

void et_tool_err(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
}

int et_tool_usage(const char *fmt, ...)
{
	char line[1800];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	if (et_tool_cmd)
		et_tool_err("%s (see 'enormoustext %s --help')", line, et_tool_cmd);
	else
		et_tool_err("%s (see 'enormoustext --help')", line);
	return ET_EXIT_USAGE;
}
