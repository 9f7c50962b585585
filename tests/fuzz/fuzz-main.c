/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A small driver for libFuzzer harnesses (LLVMFuzzerTestOneInput) when
 * clang's libFuzzer is not there, as in `make check`: it runs every seed
 * file, then a fixed number of seeded random mutations of them (bit flips,
 * interesting bytes, inserts, deletes, duplicated and spliced ranges).
 * Deterministic: the same -s SEED gives the same inputs, and the input of a
 * crash can be written out again with -o.
 *
 *   fuzz-main [-n ITERATIONS] [-s SEED] [-m MAXLEN] [-o CRASHFILE] SEED_FILE...
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

struct seed {
	uint8_t *data;
	size_t   len;
};

static struct seed *seeds;
static size_t nseeds;
static uint64_t rng_state = 0x6a09e667f3bcc909ull;

static uint64_t rnd(void)
{
	/* xorshift64*: fast, and reproducible across machines */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ull;
}

static size_t below(size_t n)
{
	return n ? rnd() % n : 0;
}

static int add_seed(const char *path)
{
	FILE *f = fopen(path, "rb");
	struct seed s = { NULL, 0 };
	size_t cap = 0, n;

	if (!f) {
		fprintf(stderr, "fuzz-main: %s: %s\n", path, strerror(errno));
		return -1;
	}
	do {
		if (s.len == cap) {
			cap = cap ? cap * 2 : 65536;
			s.data = realloc(s.data, cap);
			if (!s.data)
				abort();
		}
		n = fread(s.data + s.len, 1, cap - s.len, f);
		s.len += n;
	} while (n > 0);
	fclose(f);
	seeds = realloc(seeds, (nseeds + 1) * sizeof(*seeds));
	if (!seeds)
		abort();
	seeds[nseeds++] = s;
	return 0;
}

static int add_path(const char *path)
{
	struct stat st;
	DIR *d;
	struct dirent *de;
	char buf[4096];

	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		d = opendir(path);
		if (!d)
			return -1;
		while ((de = readdir(d)))
			if (de->d_name[0] != '.') {
				snprintf(buf, sizeof(buf), "%s/%s", path, de->d_name);
				add_seed(buf);
			}
		closedir(d);
		return 0;
	}
	return add_seed(path);
}

static const uint8_t interesting[] = {
	0, '\n', '\n', '\t', ' ', '(', ')', ':', ';', '/', '-', '>', '[', ']', '+',
	'0', '9', 'x', '.', '"', '\\', 0x7f, 0x80, 0xc3, 0xef, 0xff,
};

static size_t mutate(uint8_t *buf, size_t len, size_t max)
{
	int rounds = 1 + below(8);

	while (rounds--) {
		size_t a = below(len + 1), b, n;
		uint8_t piece[256];
		const struct seed *o;

		switch (below(8)) {
		case 0:                 /* flip a bit */
			if (len)
				buf[below(len)] ^= 1u << below(8);
			break;
		case 1:                 /* an interesting byte */
			if (len)
				buf[below(len)] = interesting[below(sizeof(interesting))];
			break;
		case 2:                 /* a random byte */
			if (len)
				buf[below(len)] = rnd();
			break;
		case 3:                 /* insert bytes */
			n = 1 + below(16);
			if (len + n > max || a > len)
				break;
			memmove(buf + a + n, buf + a, len - a);
			for (size_t i = 0; i < n; i++)
				buf[a + i] = below(2) ? interesting[below(sizeof(interesting))] : rnd();
			len += n;
			break;
		case 4:                 /* delete a range */
			if (a >= len)
				break;
			n = 1 + below(len - a < 64 ? len - a : 64);
			memmove(buf + a, buf + a + n, len - a - n);
			len -= n;
			break;
		case 5:                 /* duplicate a range */
			if (a >= len)
				break;
			n = 1 + below(len - a < sizeof(piece) ? len - a : sizeof(piece));
			b = below(len + 1);
			if (len + n > max)
				break;
			memcpy(piece, buf + a, n);
			for (size_t i = len; i-- > b;)
				buf[i + n] = buf[i];
			memcpy(buf + b, piece, n);
			len += n;
			break;
		case 6:                 /* splice in a piece of another seed */
			o = &seeds[below(nseeds)];
			if (!o->len)
				break;
			b = below(o->len);
			n = 1 + below(o->len - b < 512 ? o->len - b : 512);
			if (a + n > max)
				break;
			if (a + n > len)
				len = a + n;
			memcpy(buf + a, o->data + b, n);
			break;
		default:                /* cut the end: truncated files */
			len = below(len + 1);
			break;
		}
	}
	return len;
}

int main(int argc, char **argv)
{
	unsigned long iterations = 1000, maxlen = 1 << 16;
	const char *crashfile = NULL;
	uint8_t *buf;
	int opt;

	if (LLVMFuzzerInitialize)
		LLVMFuzzerInitialize(&argc, &argv);
	while ((opt = getopt(argc, argv, "n:s:m:o:")) != -1) {
		switch (opt) {
		case 'n': iterations = strtoul(optarg, NULL, 0); break;
		case 's': rng_state = strtoull(optarg, NULL, 0) | 1; break;
		case 'm': maxlen = strtoul(optarg, NULL, 0); break;
		case 'o': crashfile = optarg; break;
		default:
			fprintf(stderr, "usage: %s [-n N] [-s SEED] [-m MAXLEN] [-o FILE] SEED...\n", argv[0]);
			return 2;
		}
	}
	for (int i = optind; i < argc; i++)
		if (add_path(argv[i]))
			return 2;
	if (!nseeds) {
		static uint8_t empty[1];

		seeds = calloc(1, sizeof(*seeds));
		seeds[0].data = empty;
		nseeds = 1;
	}
	buf = malloc(maxlen + 1);
	if (!buf)
		return 1;
	for (size_t i = 0; i < nseeds; i++)
		LLVMFuzzerTestOneInput(seeds[i].data, seeds[i].len);
	for (unsigned long it = 0; it < iterations; it++) {
		const struct seed *s = &seeds[below(nseeds)];
		size_t len = s->len < maxlen ? s->len : maxlen;

		memcpy(buf, s->data, len);
		len = mutate(buf, len, maxlen);
		if (crashfile) {        /* keep the current input for a post-mortem */
			FILE *f = fopen(crashfile, "wb");

			if (f) {
				fwrite(buf, 1, len, f);
				fclose(f);
			}
		}
		LLVMFuzzerTestOneInput(buf, len);
	}
	printf("%s: %zu seeds, %lu mutated inputs, no crash\n", argv[0], nseeds, iterations);
	free(buf);
	return 0;
}
