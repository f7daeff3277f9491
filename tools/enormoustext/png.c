/*
 * tools/enormoustext/png.c — an RGB canvas and the PNG writer of png.h.
 *
 * A PNG is the 8-byte signature and chunks (length, type, data, CRC-32 of
 * type and data): IHDR (size, 8-bit RGB), IDAT (the image data, a zlib
 * stream), IEND.  The image data is each row behind a filter byte (0: the
 * bytes as they are).  Its zlib stream here is the 2-byte header, deflate
 * blocks of type 0 ("stored": a length, its complement, then that many
 * bytes as they are, at most 65535) and the Adler-32 of the uncompressed
 * bytes.  Each stored block goes out as an IDAT chunk of its own, so the
 * writer needs one block's worth of memory beside the image.
 *
 * Owns: the canvas (et_img_*) and the PNG format (et_png_write).
 * May call: libc (malloc for the canvas, a stdio stream to write to).
 * Never: depends on zlib or anything outside libc.
 */
#include "png.h"

#include <stdlib.h>
#include <string.h>

int et_img_init(struct et_img *im, int w, int h, uint32_t bg)
{
	im->w = im->h = 0;
	im->px = NULL;
	if (w <= 0 || h <= 0 || (size_t)w > ET_IMG_MAX_BYTES / 3 / (size_t)h)
		return -1;
	im->px = malloc((size_t)w * (size_t)h * 3);
	if (!im->px)
		return -1;
	im->w = w;
	im->h = h;
	et_img_fill(im, 0, 0, w, h, bg);
	return 0;
}

void et_img_free(struct et_img *im)
{
	free(im->px);
	im->px = NULL;
	im->w = im->h = 0;
}

void et_img_fill(struct et_img *im, int x, int y, int w, int h, uint32_t rgb)
{
	int x0 = x < 0 ? 0 : x, y0 = y < 0 ? 0 : y;
	int x1 = x + w > im->w ? im->w : x + w, y1 = y + h > im->h ? im->h : y + h;
	for (int r = y0; r < y1; r++) {
		uint8_t *p = im->px + ((size_t)r * (size_t)im->w + (size_t)x0) * 3;
		for (int c = x0; c < x1; c++) {
			*p++ = (uint8_t)(rgb >> 16);
			*p++ = (uint8_t)(rgb >> 8);
			*p++ = (uint8_t)rgb;
		}
	}
}

void et_img_frame(struct et_img *im, int x, int y, int w, int h, uint32_t rgb)
{
	et_img_fill(im, x, y, w, 1, rgb);
	et_img_fill(im, x, y + h - 1, w, 1, rgb);
	et_img_fill(im, x, y, 1, h, rgb);
	et_img_fill(im, x + w - 1, y, 1, h, rgb);
}

/* ---------------------------------------------------------------- PNG */

static uint32_t crc_table[256];

/* The CRC-32 of PNG (and zlib, gzip): polynomial 0xEDB88320, reflected. */
static uint32_t crc32_update(uint32_t crc, const uint8_t *b, size_t n)
{
	if (!crc_table[1])
		for (uint32_t i = 0; i < 256; i++) {
			uint32_t c = i;
			for (int k = 0; k < 8; k++)
				c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
			crc_table[i] = c;
		}
	for (size_t i = 0; i < n; i++)
		crc = crc_table[(crc ^ b[i]) & 0xff] ^ (crc >> 8);
	return crc;
}

struct adler {
	uint32_t a, b;
};

static void adler_update(struct adler *s, const uint8_t *p, size_t n)
{
	while (n) {
		/* 5552 bytes is the most before b can overflow 32 bits */
		size_t k = n < 5552 ? n : 5552;
		n -= k;
		while (k--) {
			s->a += *p++;
			s->b += s->a;
		}
		s->a %= 65521;
		s->b %= 65521;
	}
}

static void put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static void chunk(FILE *f, const char *type, const uint8_t *data, size_t len)
{
	uint8_t head[8], tail[4];
	put_be32(head, (uint32_t)len);
	memcpy(head + 4, type, 4);
	uint32_t crc = crc32_update(0xffffffffu, head + 4, 4);
	crc = crc32_update(crc, data, len);
	put_be32(tail, crc ^ 0xffffffffu);
	fwrite(head, 1, sizeof head, f);
	if (len)
		fwrite(data, 1, len, f);
	fwrite(tail, 1, sizeof tail, f);
}

/* Copies n bytes of the filtered image data, from byte pos on, to out: each
 * row is a filter byte 0 and then the row's pixels. */
static void raw_bytes(const struct et_img *im, size_t pos, uint8_t *out, size_t n)
{
	size_t stride = 1 + (size_t)im->w * 3;
	while (n) {
		size_t row = pos / stride, col = pos % stride, k;
		if (col == 0) {
			*out = 0;
			k = 1;
		} else {
			k = stride - col < n ? stride - col : n;
			memcpy(out, im->px + row * (stride - 1) + (col - 1), k);
		}
		out += k;
		pos += k;
		n -= k;
	}
}

#define STORED_MAX 65535

int et_png_write(FILE *f, const struct et_img *im)
{
	static const uint8_t sig[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };
	uint8_t ihdr[13];
	put_be32(ihdr, (uint32_t)im->w);
	put_be32(ihdr + 4, (uint32_t)im->h);
	ihdr[8] = 8;                        /* bits per sample */
	ihdr[9] = 2;                        /* colour type: RGB */
	ihdr[10] = ihdr[11] = ihdr[12] = 0; /* deflate, adaptive filters, not interlaced */
	fwrite(sig, 1, sizeof sig, f);
	chunk(f, "IHDR", ihdr, sizeof ihdr);

	/* room for the zlib header, a block header, a block, the Adler-32 */
	uint8_t *buf = malloc(2 + 5 + STORED_MAX + 4);
	if (!buf)
		return -1;
	size_t total = (size_t)im->h * (1 + (size_t)im->w * 3), pos = 0;
	struct adler ad = { 1, 0 };
	do {
		size_t n = total - pos < STORED_MAX ? total - pos : STORED_MAX, len = 0;
		int last = pos + n == total;
		if (pos == 0) {
			/* CM 8 (deflate), a 32 KiB window, no dictionary; the check
			 * bits make 0x7801 a multiple of 31 */
			buf[len++] = 0x78;
			buf[len++] = 0x01;
		}
		buf[len++] = (uint8_t)last;   /* BFINAL, BTYPE 00: stored */
		buf[len++] = (uint8_t)n;
		buf[len++] = (uint8_t)(n >> 8);
		buf[len++] = (uint8_t)~n;
		buf[len++] = (uint8_t)(~n >> 8);
		raw_bytes(im, pos, buf + len, n);
		adler_update(&ad, buf + len, n);
		len += n;
		pos += n;
		if (last) {
			put_be32(buf + len, ad.b << 16 | ad.a);
			len += 4;
		}
		chunk(f, "IDAT", buf, len);
	} while (pos < total && !ferror(f));
	free(buf);
	chunk(f, "IEND", NULL, 0);
	return ferror(f) ? -1 : 0;
}
