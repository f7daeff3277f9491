/*
 * tools/enormoustext/msg.c — the messages every part of the command
 * shares: one line on stderr, "enormoustext CMD: ...", for a bad input
 * (et_tool_err) or a usage error (et_tool_usage; opts.c's parser says
 * which option).
 *
 * Owns: et_tool_cmd (the subcommand running, set by main.c) and the
 * shape of those lines; the one line for a kernel thread named where a
 * process is wanted (et_tool_refuse_kthread).
 * May call: libc (stdio).
 * Never: exits, or writes more than one line a message.
 */
#include "tool.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

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

int et_tool_refuse_kthread(const char *proc, long pid)
{
	if (!et_tool_kthread(proc, pid))
		return 0;
	char path[4096], comm[64] = "";
	snprintf(path, sizeof path, "%s/%ld/comm", proc, pid);
	if (et_tool_read(path, comm, sizeof comm) > 0)
		comm[strcspn(comm, "\n")] = '\0';
	et_tool_err("PID %ld%s%s%s: a kernel thread: it has no user memory, so no text of its own", pid,
	            comm[0] ? " (" : "", comm, comm[0] ? ")" : "");
	return 1;
}
