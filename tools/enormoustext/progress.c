/*
 * tools/enormoustext/progress.c — the progress line of long work (see
 * progress.h): drawn on standard error where it is a terminal, rewritten
 * with a carriage return (no escape sequences: any terminal, TERM=dumb
 * too), padded with spaces over what it replaces, cut to the terminal's
 * width less one column so that it never wraps, erased at the end.
 *
 * Whatever else the command writes while the line is shown erases it
 * first: while a line is on, stdio's stderr (and stdout, where it is a
 * terminal too) are streams of this file's (fopencookie) whose writes
 * erase the line, then write to the descriptor; so an error line
 * (et_tool_err) or a file's report never lands in the middle of it.  The
 * next et_progress_show draws it again.  et_progress_end puts the
 * command's own streams back.
 *
 * Owns: whether the line is drawn, its drawing and its erasing, and the
 * streams that stand in for stderr and stdout while it is on.
 * May call: libc only.
 * Never: writes anything when standard error is not a terminal; holds
 * more than one line; writes a byte of the command's output itself.
 */
#include "progress.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

static uint64_t mono_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* Write all of buf to descriptor fd. */
static void put(int fd, const char *buf, size_t n)
{
	while (n) {
		ssize_t w = write(fd, buf, n);
		if (w <= 0)
			return;
		buf += w;
		n -= (size_t)w;
	}
}

/* ---- the streams that erase the line before they write */

static struct et_progress *active;      /* the line shown, if any */
static FILE *own_err, *own_out;         /* the command's streams, while ours stand in */

static ssize_t erase_then_write(void *cookie, const char *buf, size_t n)
{
	if (active)
		et_progress_clear(active);
	put((int)(intptr_t)cookie, buf, n);
	return (ssize_t)n;
}

static const cookie_io_functions_t erasing = { .write = erase_then_write };

#ifdef __GLIBC__
/* stdio's stderr, and stdout when it is a terminal, replaced by ours. */
static void streams_in(void)
{
	FILE *e = fopencookie((void *)(intptr_t)STDERR_FILENO, "w", erasing);
	if (!e)
		return;
	setvbuf(e, NULL, _IONBF, 0);
	fflush(stderr);
	own_err = stderr;
	stderr = e;
	if (isatty(STDOUT_FILENO) == 1) {
		FILE *o = fopencookie((void *)(intptr_t)STDOUT_FILENO, "w", erasing);
		if (o) {
			setvbuf(o, NULL, _IOLBF, BUFSIZ);
			fflush(stdout);
			own_out = stdout;
			stdout = o;
		}
	}
}

static void streams_out(void)
{
	if (own_out) {
		fclose(stdout);   /* flushes: erase_then_write, the line still known */
		stdout = own_out;
		own_out = NULL;
	}
	if (own_err) {
		fclose(stderr);
		stderr = own_err;
		own_err = NULL;
	}
}
#else
/* (where stderr cannot be replaced: the line is not drawn at all) */
static void streams_in(void) {}
static void streams_out(void) {}
#endif

/* ---- the line */

void et_progress_start(struct et_progress *p, const char *what)
{
	memset(p, 0, sizeof *p);
	p->what = what;
	p->t0_ns = mono_ns();
	if (isatty(STDERR_FILENO) != 1 || active)
		return;
	streams_in();
	if (!own_err)
		return;
	p->on = true;
	active = p;
}

double et_progress_elapsed(const struct et_progress *p)
{
	return (double)(mono_ns() - p->t0_ns) / 1e9;
}

/* The terminal's width in columns (80 when it does not say). */
static size_t columns(void)
{
	struct winsize w;
	if (ioctl(STDERR_FILENO, TIOCGWINSZ, &w) == 0 && w.ws_col >= 20)
		return w.ws_col;
	return 80;
}

void et_progress_show(struct et_progress *p, bool force, const char *fmt, ...)
{
	if (!p->on)
		return;
	uint64_t now = mono_ns();
	if (!force && p->shown && now - p->drawn_ns < 100000000ull)
		return;
	p->drawn_ns = now;
	char text[512];
	int n = snprintf(text, sizeof text, "%s: ", p->what);
	if (n < 0)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(text + n, sizeof text - (size_t)n, fmt, ap);
	va_end(ap);
	size_t len = strlen(text), max = columns() - 1;
	if (len > max)
		len = max;
	/* what stdio holds goes out first (it erases the line, if shown) */
	fflush(stdout);
	fflush(stderr);
	/* "\r" TEXT, then spaces over the rest of what was shown, and back */
	char line[3 * sizeof text + 2];
	size_t k = 0;
	line[k++] = '\r';
	memcpy(line + k, text, len);
	k += len;
	if (p->shown > len) {
		for (size_t i = len; i < p->shown; i++)
			line[k++] = ' ';
		line[k++] = '\r';
		memcpy(line + k, text, len);
		k += len;
	}
	put(STDERR_FILENO, line, k);
	p->shown = len;
}

void et_progress_clear(struct et_progress *p)
{
	if (!p->on || !p->shown)
		return;
	char line[600];
	size_t k = 0, n = p->shown < sizeof line - 2 ? p->shown : sizeof line - 2;
	line[k++] = '\r';
	memset(line + k, ' ', n);
	k += n;
	line[k++] = '\r';
	p->shown = 0;
	put(STDERR_FILENO, line, k);
}

void et_progress_end(struct et_progress *p)
{
	if (!p->on)
		return;
	streams_out();
	et_progress_clear(p);
	p->on = false;
	active = NULL;
}
