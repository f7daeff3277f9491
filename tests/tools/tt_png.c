/*
 * tt_png FILE [X Y] — checks the PNG that `enormoustext profile show --png`
 * writes, independently of the command's writer: the signature, every
 * chunk's CRC-32, the IHDR (8-bit RGB, not interlaced), IDAT chunks in one
 * run, IEND last; the zlib stream (its header, its deflate blocks, which
 * must be stored ones since the command writes no others, each length
 * against its complement, the Adler-32 of what they hold); and the image
 * data: exactly the rows of the IHDR's size, each with filter 0.
 *
 * Prints "WIDTH HEIGHT", or with X Y the colour of that pixel as "R G B".
 * Exit: 0 a valid PNG; 1 not one (one line says where it goes wrong);
 * 2 usage.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *name;

__attribute__((format(printf, 1, 2))) _Noreturn static void bad(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "tt_png: %s: ", name);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(1);
}

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Bit by bit, unlike the command's table: a shared mistake is less likely. */
static uint32_t crc32(const uint8_t *p, size_t n)
{
	uint32_t c = 0xffffffffu;
	for (size_t i = 0; i < n; i++) {
		c ^= p[i];
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1)));
	}
	return c ^ 0xffffffffu;
}

static uint32_t adler32(const uint8_t *p, size_t n)
{
	uint32_t a = 1, b = 0;
	for (size_t i = 0; i < n; i++) {
		a = (a + p[i]) % 65521;
		b = (b + a) % 65521;
	}
	return b << 16 | a;
}

static uint8_t *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		bad("cannot open it");
	size_t cap = 1 << 16, n = 0, got;
	uint8_t *b = malloc(cap);
	while (b && (got = fread(b + n, 1, cap - n, f)) > 0) {
		n += got;
		if (n == cap)
			b = realloc(b, cap *= 2);
	}
	if (!b || ferror(f))
		bad("cannot read it");
	fclose(f);
	*len = n;
	return b;
}

struct png {
	uint32_t w, h;
	uint8_t *z;            /* the IDAT chunks' data, joined */
	size_t zlen;
};

static void chunks(const uint8_t *b, size_t len, struct png *png)
{
	static const uint8_t sig[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };
	if (len < 8 || memcmp(b, sig, 8))
		bad("no PNG signature");
	size_t off = 8, idat_runs = 0;
	int seen_ihdr = 0, seen_iend = 0;
	char prev[5] = "";
	png->z = malloc(len);
	png->zlen = 0;
	while (off < len) {
		if (seen_iend)
			bad("bytes after IEND, at %zu", off);
		if (len - off < 12)
			bad("a chunk cut short at %zu", off);
		uint32_t n = be32(b + off);
		char type[5];
		memcpy(type, b + off + 4, 4);
		type[4] = '\0';
		if (n > 0x7fffffffu || n > len - off - 12)
			bad("chunk %s at %zu: length %u runs past the end", type, off, n);
		uint32_t crc = be32(b + off + 8 + n), want = crc32(b + off + 4, 4 + (size_t)n);
		if (crc != want)
			bad("chunk %s at %zu: CRC %08x, its bytes give %08x", type, off, crc, want);
		const uint8_t *d = b + off + 8;
		if (!seen_ihdr && strcmp(type, "IHDR"))
			bad("the first chunk is %s, not IHDR", type);
		if (!strcmp(type, "IHDR")) {
			if (seen_ihdr || n != 13)
				bad("a second IHDR, or one of %u bytes", n);
			seen_ihdr = 1;
			png->w = be32(d);
			png->h = be32(d + 4);
			if (!png->w || !png->h || png->w > 0x7fffffffu || png->h > 0x7fffffffu)
				bad("IHDR: size %u x %u", png->w, png->h);
			if (d[8] != 8 || d[9] != 2 || d[10] || d[11] || d[12])
				bad("IHDR: depth %u, colour type %u, compression %u, filter %u, interlace %u; expected "
				    "8-bit RGB, 0, 0, 0", d[8], d[9], d[10], d[11], d[12]);
		} else if (!strcmp(type, "IDAT")) {
			if (strcmp(prev, "IDAT"))
				idat_runs++;
			memcpy(png->z + png->zlen, d, n);
			png->zlen += n;
		} else if (!strcmp(type, "IEND")) {
			if (n)
				bad("IEND has %u bytes of data", n);
			seen_iend = 1;
		} else if (!(type[0] & 0x20)) {
			bad("an unknown critical chunk %s", type);
		}
		memcpy(prev, type, 5);
		off += 12 + (size_t)n;
	}
	if (!seen_iend)
		bad("no IEND");
	if (idat_runs != 1)
		bad("%zu runs of IDAT chunks, expected one", idat_runs);
}

/* The zlib stream of stored blocks, inflated: the filtered rows. */
static uint8_t *inflate_stored(const struct png *png, size_t *outlen)
{
	const uint8_t *z = png->z;
	size_t n = png->zlen, off = 2, len = 0;
	if (n < 2 || (z[0] & 15) != 8 || z[0] >> 4 > 7 || ((unsigned)z[0] << 8 | z[1]) % 31 || (z[1] & 0x20))
		bad("zlib header %02x %02x is not deflate without a dictionary", n ? z[0] : 0, n > 1 ? z[1] : 0);
	uint8_t *out = malloc(n);
	for (int final = 0; !final;) {
		if (off >= n)
			bad("zlib: the deflate stream ends without a final block");
		final = z[off] & 1;
		if ((z[off] >> 1 & 3) != 0)
			bad("zlib: a block of type %u at %zu; the command writes stored blocks only", z[off] >> 1 & 3, off);
		if (n - off < 5)
			bad("zlib: a stored block header cut short at %zu", off);
		unsigned bl = z[off + 1] | z[off + 2] << 8, nl = z[off + 3] | z[off + 4] << 8;
		if ((bl ^ 0xffffu) != nl)
			bad("zlib: stored block at %zu: length %u, complement %u", off, bl, nl);
		off += 5;
		if (bl > n - off)
			bad("zlib: stored block of %u bytes runs past the data", bl);
		memcpy(out + len, z + off, bl);
		len += bl;
		off += bl;
	}
	if (n - off != 4)
		bad("zlib: %zu bytes after the final block, expected the 4 of the Adler-32", n - off);
	uint32_t a = be32(z + off), want = adler32(out, len);
	if (a != want)
		bad("zlib: Adler-32 %08x, the data gives %08x", a, want);
	*outlen = len;
	return out;
}

int main(int argc, char **argv)
{
	if (argc != 2 && argc != 4) {
		fprintf(stderr, "usage: tt_png FILE [X Y]\n");
		return 2;
	}
	name = argv[1];
	size_t len, rawlen;
	uint8_t *b = read_all(name, &len);
	struct png png = { 0 };
	chunks(b, len, &png);
	uint8_t *raw = inflate_stored(&png, &rawlen);
	size_t stride = 1 + (size_t)png.w * 3;
	if (rawlen != stride * png.h)
		bad("%zu bytes of image data, %u rows of %zu expected", rawlen, png.h, stride);
	for (uint32_t y = 0; y < png.h; y++)
		if (raw[y * stride])
			bad("row %u has filter %u; the command writes filter 0", y, raw[y * stride]);
	if (argc == 2) {
		printf("%u %u\n", png.w, png.h);
	} else {
		char *e1, *e2;
		unsigned long x = strtoul(argv[2], &e1, 10), y = strtoul(argv[3], &e2, 10);
		if (*e1 || *e2 || x >= png.w || y >= png.h)
			bad("no pixel (%s, %s) in a %u x %u image", argv[2], argv[3], png.w, png.h);
		const uint8_t *p = raw + y * stride + 1 + x * 3;
		printf("%u %u %u\n", p[0], p[1], p[2]);
	}
	free(raw);
	free(png.z);
	free(b);
	return 0;
}
