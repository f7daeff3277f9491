/*
 * png.h — a small RGB canvas, a bitmap font to write on it, and a PNG
 * writer, for `enormoustext profile show --png`.
 *
 * The command depends on libc and libelf only, so the PNG is written here
 * without zlib: the image data is a zlib stream of stored (uncompressed)
 * deflate blocks, which every PNG reader accepts.  Uncompressed, a file
 * takes 3 bytes a pixel: about 300 KiB for a heat map of two objects, 110 KiB
 * more for each further object at the narrowest width; any PNG optimizer
 * shrinks it about a hundredfold if that matters.
 */
#ifndef ET_PNG_H
#define ET_PNG_H

#include <stdint.h>
#include <stdio.h>

/* An 8-bit RGB image, rows top to bottom, 3 bytes a pixel.  Colours are
 * given as 0xRRGGBB. */
struct et_img {
	int w, h;
	uint8_t *px;
};

/* The largest picture et_img_init agrees to make (bytes of pixels). */
#define ET_IMG_MAX_BYTES ((size_t)1 << 30)

/* A w x h image filled with bg; -1 when it would be over ET_IMG_MAX_BYTES
 * or memory is short. */
int et_img_init(struct et_img *im, int w, int h, uint32_t bg);
void et_img_free(struct et_img *im);
/* A filled rectangle and a one-pixel frame, clipped to the image. */
void et_img_fill(struct et_img *im, int x, int y, int w, int h, uint32_t rgb);
void et_img_frame(struct et_img *im, int x, int y, int w, int h, uint32_t rgb);

/* The font (font.c): ET_FONT_W x ET_FONT_H glyphs for the printable ASCII
 * characters, ET_FONT_ASCENT rows above the baseline and the rest for
 * descenders; text advances ET_FONT_ADVANCE pixels a character. */
#define ET_FONT_W 5
#define ET_FONT_H 9
#define ET_FONT_ASCENT 7
#define ET_FONT_ADVANCE 6

/* The rows of c's glyph, top first, bit ET_FONT_W-1 the leftmost column;
 * a byte outside 0x20..0x7e gets the glyph of '?'. */
const uint8_t *et_font_glyph(unsigned char c);
/* Writes s with its top-left corner at (x, y), each font pixel scale x
 * scale, clipped to the image; returns the x after the last character. */
int et_img_text(struct et_img *im, int x, int y, int scale, const char *s, uint32_t rgb);

/* Writes im as a PNG to f; 0, or -1 when a write failed (errno from stdio;
 * the caller still checks fclose). */
int et_png_write(FILE *f, const struct et_img *im);

#endif
