/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pprof writer: a gzip-compressed profile.proto (github.com/google/pprof,
 * proto/profile.proto), what go tool pprof, speedscope and continuous
 * profiling servers (Pyroscope, Parca) read.
 *
 *  - sample types: perf samples as "samples"/count and the event's period
 *    (nanoseconds for cpu-clock and task-clock, else count); instrumented
 *    calls as "calls"/count and "wall"/nanoseconds of self time.  A sample
 *    of one kind has zeros in the other's columns.
 *  - perf.data input: one mapping per object (path, build id), one location
 *    per address of an object, functions named as perf names them (JIT
 *    names from perf maps and jitted-*.so, with the source lines perf
 *    inject wrote into jitted-*.so from the jitdump); perf script text and calls:
 *    one location per function name, without mapping.
 *  - identical stacks are added up into one sample.
 *  - a sample whose leaf is tier code (func[tag], a tag of the tiers
 *    files) has the labels tier (the tag) and tier_num (its number).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "read/pdscript.h"
#include "read/symbolize.h"
#include "read/util.h"
#include "tools/convert/callpath.h"
#include "tools/convert/convert.h"
#include "tools/convert/protobuf.h"

/* ---- interning: byte keys -> ids 1, 2, ... */

struct ient {
	uint64_t hash;
	size_t   off, len;   /* key in the arena */
};

struct intern {
	struct ient *e;        /* by id - 1 */
	size_t       n, cap;
	uint32_t    *ix;       /* id, 0 = empty */
	size_t       mask;
	char        *arena;
	size_t       alen, acap;
};

static uint64_t hash_bytes(const void *p, size_t n)
{
	const unsigned char *s = p;
	uint64_t h = 1469598103934665603ull ^ n;

	while (n >= 8) {
		uint64_t v;

		memcpy(&v, s, 8);
		h = (h ^ v) * 0x9e3779b97f4a7c15ull;
		h ^= h >> 29;
		s += 8;
		n -= 8;
	}
	while (n--)
		h = (h ^ *s++) * 1099511628211ull;
	return h ^ (h >> 32);
}

static void intern_free(struct intern *t)
{
	free(t->e);
	free(t->ix);
	free(t->arena);
	memset(t, 0, sizeof(*t));
}

static const void *intern_key(const struct intern *t, uint64_t id)
{
	return t->arena + t->e[id - 1].off;
}

/* the id of key, added if new (*added = 1); 0 on ENOMEM */
static uint64_t intern(struct intern *t, const void *key, size_t len, int *added)
{
	uint64_t h = hash_bytes(key, len);
	size_t j;

	*added = 0;
	if ((t->n + 1) * 2 > t->mask) {
		size_t mask = t->mask ? t->mask * 2 + 1 : 1023, i;
		uint32_t *ix = calloc(mask + 1, sizeof(*ix));

		if (!ix)
			return 0;
		for (i = 0; i < t->n; i++) {
			for (j = t->e[i].hash & mask; ix[j]; j = (j + 1) & mask)
				;
			ix[j] = (uint32_t)i + 1;
		}
		free(t->ix);
		t->ix = ix;
		t->mask = mask;
	}
	for (j = h & t->mask; t->ix[j]; j = (j + 1) & t->mask) {
		const struct ient *e = &t->e[t->ix[j] - 1];

		if (e->hash == h && e->len == len && !memcmp(t->arena + e->off, key, len))
			return t->ix[j];
	}
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 256;
		struct ient *e = realloc(t->e, cap * sizeof(*e));

		if (!e)
			return 0;
		t->e = e;
		t->cap = cap;
	}
	/* keys start 8-byte aligned: stacks are read back as uint64_t arrays */
	t->alen = (t->alen + 7) & ~(size_t)7;
	if (t->acap - t->alen < len + 1) {
		size_t cap = t->acap ? t->acap : 4096;
		char *a;

		while (cap - t->alen < len + 1)
			cap *= 2;
		a = realloc(t->arena, cap);
		if (!a)
			return 0;
		t->arena = a;
		t->acap = cap;
	}
	memcpy(t->arena + t->alen, key, len);
	t->arena[t->alen + len] = 0;
	t->e[t->n] = (struct ient){ h, t->alen, len };
	t->alen += len + 1;
	t->ix[j] = (uint32_t)++t->n;
	*added = 1;
	return t->n;
}

/* ---- the profile */

enum { V_SAMPLES, V_PERIOD, V_CALLS, V_WALL, NVALUES };

struct mapping {
	uint64_t start, limit, offset, filename, build_id;
};

struct location {
	uint64_t mapping, address, function;
	int64_t  line;
};

struct function {
	uint64_t name, filename;
};

struct label {             /* of a stack whose leaf is tier code */
	int      tier;         /* -1: not tier code */
	uint64_t tag;          /* string id */
};

struct pprof {
	struct outfile       *out;
	const struct cv_opts *o;
	struct intern         strings, functions, mappings, locations, stacks;
	struct mapping       *maps;
	struct location      *locs;
	struct function      *funcs;
	size_t                cap_maps, cap_locs, cap_funcs;
	int64_t             (*values)[NVALUES];   /* by stack id - 1 */
	size_t                cap_values;
	struct label         *labels;             /* by stack id - 1 */
	size_t                cap_labels;
	int                   any_label;
	uint64_t             *ids;                /* a stack's location ids, leaf first */
	size_t                cap_ids;
	struct callpath       paths;              /* a call's path -> its stack id */
	char                  event[64];
	int                   event_ns;
	uint64_t              main_map;           /* the program's mapping, 0 if none seen */
	uint64_t              main_map_guess;     /* else the first non-library object */
};

static uint64_t str_id(struct pprof *p, const char *s, size_t n)
{
	int added;

	/* string_table[0] is "": ids are indexes, so id - 1 */
	return intern(&p->strings, s, n, &added) - 1;
}

/* a function: its name, and its source file when known ("" if not) */
static uint64_t function_id(struct pprof *p, const char *name, size_t n, const char *file)
{
	size_t fl = strlen(file);
	char *key = malloc(n + 1 + fl);
	uint64_t id;
	int added;

	if (!key)
		return 0;
	memcpy(key, name, n);
	key[n] = 0;
	memcpy(key + n + 1, file, fl);
	id = intern(&p->functions, key, n + 1 + fl, &added);
	free(key);
	if (!id || (added && rd_grow((void **)&p->funcs, &p->cap_funcs, id, sizeof(*p->funcs))))
		return 0;
	if (added) {
		p->funcs[id - 1].name = str_id(p, name, n);
		p->funcs[id - 1].filename = fl ? str_id(p, file, fl) : 0;
	}
	return id;
}

/* a location named only by its function (text input, calls) */
static uint64_t name_location(struct pprof *p, const char *name, size_t n)
{
	struct location key = { 0, 0, function_id(p, name, n, ""), 0 };
	uint64_t id;
	int added;

	if (!key.function)
		return 0;
	id = intern(&p->locations, &key, sizeof(key), &added);
	if (!id || (added && rd_grow((void **)&p->locs, &p->cap_locs, id, sizeof(*p->locs))))
		return 0;
	p->locs[id - 1] = key;
	return id;
}

static uint64_t mapping_id(struct pprof *p, const struct pd_map *m)
{
	const struct pd_dso *d = m->dso;
	uint64_t id;
	int added;

	id = intern(&p->mappings, &d, sizeof(d), &added);
	if (!id || (added && rd_grow((void **)&p->maps, &p->cap_maps, id, sizeof(*p->maps))))
		return 0;
	if (added) {
		struct mapping *mp = &p->maps[id - 1];
		char hex[41];

		for (size_t i = 0; i < d->build_id_size; i++)
			sprintf(hex + 2 * i, "%02x", d->build_id[i]);
		hex[2 * d->build_id_size] = 0;
		mp->start = m->start;
		mp->limit = m->end;
		mp->offset = m->identity ? 0 : m->pgoff;
		mp->filename = str_id(p, d->name, strlen(d->name));
		mp->build_id = d->build_id_size ? str_id(p, hex, strlen(hex)) : 0;
	}
	return id;
}

/*
 * pprof takes the first mapping for the main binary ("File:" in its
 * output): the program's own, not the first object a sample happened to
 * be in (often ld.so or the kernel).  The program is the object named as
 * the sampled command (perf's comm, 15 characters at most), else the
 * first object that is neither a shared library nor perf's pseudo-object.
 */
static int is_program(const struct pd_dso *d, const char *comm)
{
	const char *base = strrchr(d->name, '/');
	size_t n = comm ? strlen(comm) : 0;

	base = base ? base + 1 : d->name;
	if (d->jit || d->name[0] == '[')
		return 0;
	if (!strncmp(base, "lt-", 3))           /* a libtool wrapper's program */
		base += 3;
	if (n && (n >= 15 ? !strncmp(base, comm, n) : !strcmp(base, comm)))
		return 2;
	return !strstr(base, ".so") && d->kind == PD_DSO_ELF;
}

static void note_program(struct pprof *p, const struct pd_raw *raw)
{
	for (size_t i = 0; i < raw->nframes; i++) {
		const struct pd_map *m = raw->frames[i].loc.map;
		int how;

		if (!m || !(how = is_program(m->dso, raw->comm)))
			continue;
		if (how == 2 || !p->main_map_guess) {
			uint64_t id = mapping_id(p, m);

			if (how == 2)
				p->main_map = id;
			else
				p->main_map_guess = id;
		}
		if (how == 2)
			return;
	}
}

/* a mapping's number in the file: the program's is 1 */
static uint64_t map_no(const struct pprof *p, uint64_t id)
{
	uint64_t main = p->main_map ? p->main_map : p->main_map_guess;

	if (!main || !id)
		return id;
	return id == main ? 1 : id == 1 ? main : id;
}

/* a location of a perf.data sample: its object and address */
static uint64_t raw_location(struct pprof *p, const struct pd_frame *f)
{
	struct { const void *dso; uint64_t ip; } key = { f->loc.map ? f->loc.map->dso : NULL, f->ip };
	uint64_t id;
	int added;

	id = intern(&p->locations, &key, sizeof(key), &added);
	if (!id || (added && rd_grow((void **)&p->locs, &p->cap_locs, id, sizeof(*p->locs))))
		return 0;
	if (added) {
		struct location *l = &p->locs[id - 1];

		char file[1024] = "";
		int line = 0;

		/* JIT code: the source lines perf inject took from the jitdump */
		if (f->loc.sym && f->loc.map->dso->jit && f->loc.map->dso->kind == PD_DSO_ELF &&
		    sym_source_line(f->loc.map->dso->name, f->loc.addr, file, sizeof(file), &line))
			file[0] = 0, line = 0;
		l->address = f->ip;
		l->line = line;
		l->mapping = f->loc.map ? mapping_id(p, f->loc.map) : 0;
		l->function = f->loc.sym ? function_id(p, f->loc.sym->name,
							strlen(f->loc.sym->name), file) : 0;
		if ((f->loc.map && !l->mapping) || (f->loc.sym && !l->function))
			return 0;
	}
	return id;
}

/* the labels of a new stack: the tier of its leaf, if it is tier code */
static int label_stack(struct pprof *p, uint64_t id, const char *leaf, size_t len)
{
	size_t fl, off, tl;
	unsigned tier;

	if (rd_grow((void **)&p->labels, &p->cap_labels, id, sizeof(*p->labels)))
		return -ENOMEM;
	p->labels[id - 1].tier = -1;
	if (!leaf || !cv_tiers_split(p->o->tiers, leaf, len, &fl, &off, &tl, &tier))
		return 0;
	p->labels[id - 1].tier = (int)tier;
	p->labels[id - 1].tag = str_id(p, leaf + off, tl);
	p->any_label = 1;
	return 0;
}

/*
 * Add v0, v1 to the stack of p->ids[0..n), whose leaf is named leaf[0..len)
 * (NULL: no name); its id in *out_id (may be NULL).
 */
static int add_stack(struct pprof *p, size_t n, int kind, int64_t v0, int64_t v1,
		     const char *leaf, size_t len, uint64_t *out_id)
{
	uint64_t id;
	int added;

	p->ids[n] = (uint64_t)kind;      /* samples and calls of one stack stay apart */
	id = intern(&p->stacks, p->ids, (n + 1) * sizeof(*p->ids), &added);
	if (!id || rd_grow((void **)&p->values, &p->cap_values, id, sizeof(*p->values)) ||
	    (added && label_stack(p, id, leaf, len)))
		return -ENOMEM;
	p->values[id - 1][kind] += v0;
	p->values[id - 1][kind + 1] += v1;
	if (out_id)
		*out_id = id;
	return 0;
}

static int pprof_sample(void *w, const struct ps_sample *s)
{
	struct pprof *p = w;
	const char *leaf;
	size_t i, n;

	if (!p->event[0] && s->event.len) {
		size_t k = strcspn(s->event.s, ":");

		k = k < s->event.len ? k : s->event.len;
		snprintf(p->event, sizeof(p->event), "%.*s", (int)k, s->event.s);
		p->event_ns = k >= 5 && !memcmp(s->event.s + k - 5, "clock", 5);
	}
	n = s->raw ? s->raw->nframes : s->nframes;
	if (rd_grow((void **)&p->ids, &p->cap_ids, n + 2, sizeof(*p->ids)))
		return -ENOMEM;
	if (!n) {
		/* pprof drops a sample without locations (the folded output keeps
		 * it under its command): perf's name for what it cannot place */
		p->ids[0] = name_location(p, "[unknown]", 9);
		return p->ids[0] ? add_stack(p, 1, V_SAMPLES, 1, (int64_t)s->period, NULL, 0, NULL)
				 : -ENOMEM;
	}
	if (s->raw && !p->main_map)
		note_program(p, s->raw);
	for (i = 0; i < n; i++) {
		if (s->raw) {
			p->ids[i] = raw_location(p, &s->raw->frames[i]);
		} else {
			const struct ps_str *f = &s->frames[n - 1 - i];

			p->ids[i] = name_location(p, f->s, f->len);
		}
		if (!p->ids[i])
			return -ENOMEM;
	}
	if (!s->raw)
		return add_stack(p, n, V_SAMPLES, 1, (int64_t)s->period, s->frames[n - 1].s,
				 s->frames[n - 1].len, NULL);
	leaf = s->raw->frames[0].loc.sym ? s->raw->frames[0].loc.sym->name : NULL;
	return add_stack(p, n, V_SAMPLES, 1, (int64_t)s->period, leaf, leaf ? strlen(leaf) : 0,
			 NULL);
}

static int pprof_call(void *w, const struct cv_call *c)
{
	struct pprof *p = w;
	size_t i, n = c->depth + 1;
	uint64_t id;
	int64_t known;
	int ret;

	/* a stack of names only: the trace and the path decide it */
	if ((known = callpath_find(&p->paths, c)) >= 0) {
		p->values[known][V_CALLS] += (int64_t)c->calls;
		p->values[known][V_CALLS + 1] += c->est_ns;
		return 0;
	}
	if (rd_grow((void **)&p->ids, &p->cap_ids, n + 1, sizeof(*p->ids)))
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		const char *name = c->stack[c->depth - i];

		p->ids[i] = name_location(p, name, strlen(name));
		if (!p->ids[i])
			return -ENOMEM;
	}
	ret = add_stack(p, n, V_CALLS, (int64_t)c->calls, c->est_ns, c->stack[c->depth],
			strlen(c->stack[c->depth]), &id);
	if (!ret && id - 1 < UINT32_MAX)
		callpath_keep(&p->paths, c, (uint32_t)(id - 1));
	return ret;
}

static void *pprof_begin(struct outfile *out, const struct cv_opts *o)
{
	struct pprof *p = calloc(1, sizeof(*p));
	int added;

	if (!p)
		return NULL;
	p->out = out;
	p->o = o;
	if (!intern(&p->strings, "", 0, &added)) {
		free(p);
		return NULL;
	}
	return p;
}

static void value_type(struct pprof *p, struct pb *pb, struct pb *tmp, int field,
		       const char *type, const char *unit)
{
	pb_reset(tmp);
	pb_varint_nz(tmp, 1, str_id(p, type, strlen(type)));
	pb_varint_nz(tmp, 2, str_id(p, unit, strlen(unit)));
	pb_bytes(pb, field, tmp->b, tmp->len);
}

static int encode(struct pprof *p, struct pb *pb)
{
	struct pb tmp = { 0 }, line = { 0 };
	uint64_t key_tier = 0, key_num = 0, key_unit = 0;
	int calls = p->o->has_calls;
	size_t i, nv = calls ? 4 : 2;

	/* every string is interned before the table is written */
	str_id(p, "samples", 7);
	str_id(p, "count", 5);
	str_id(p, p->event[0] ? p->event : "events", strlen(p->event[0] ? p->event : "events"));
	str_id(p, p->event_ns ? "nanoseconds" : "count", p->event_ns ? 11 : 5);
	if (calls) {
		str_id(p, "calls", 5);
		str_id(p, "wall", 4);
		str_id(p, "nanoseconds", 11);
	}
	if (p->any_label) {
		key_tier = str_id(p, "tier", 4);
		key_num = str_id(p, "tier_num", 8);
		key_unit = str_id(p, "count", 5);
	}
	value_type(p, pb, &tmp, 1, "samples", "count");
	value_type(p, pb, &tmp, 1, p->event[0] ? p->event : "events",
		   p->event_ns ? "nanoseconds" : "count");
	if (calls) {
		value_type(p, pb, &tmp, 1, "calls", "count");
		value_type(p, pb, &tmp, 1, "wall", "nanoseconds");
	}
	for (i = 0; i < p->stacks.n; i++) {
		const uint64_t *ids = intern_key(&p->stacks, i + 1);
		size_t n = p->stacks.e[i].len / sizeof(uint64_t) - 1;
		uint64_t v[NVALUES];

		for (size_t k = 0; k < NVALUES; k++)
			/* a stack's estimated self time below zero is 0 (cvtrace.c) */
			v[k] = p->values[i][k] < 0 ? 0 : (uint64_t)p->values[i][k];
		pb_reset(&tmp);
		pb_packed(&tmp, 1, ids, n);
		pb_packed(&tmp, 2, v, nv);
		if (p->labels[i].tier >= 0) {
			/* Label: key 1, str 2 or num 3 (one of them) */
			pb_reset(&line);
			pb_varint(&line, 1, key_tier);
			pb_varint(&line, 2, p->labels[i].tag);
			pb_bytes(&tmp, 3, line.b, line.len);
			pb_reset(&line);
			pb_varint(&line, 1, key_num);
			pb_varint(&line, 3, (uint64_t)p->labels[i].tier);
			/* with a unit: pprof drops a num of 0 without one */
			pb_varint(&line, 4, key_unit);
			pb_bytes(&tmp, 3, line.b, line.len);
		}
		pb_bytes(pb, 2, tmp.b, tmp.len);
	}
	for (i = 0; i < p->mappings.n; i++) {
		const struct mapping *m = &p->maps[map_no(p, i + 1) - 1];

		pb_reset(&tmp);
		pb_varint(&tmp, 1, i + 1);
		pb_varint_nz(&tmp, 2, m->start);
		pb_varint_nz(&tmp, 3, m->limit);
		pb_varint_nz(&tmp, 4, m->offset);
		pb_varint_nz(&tmp, 5, m->filename);
		pb_varint_nz(&tmp, 6, m->build_id);
		pb_varint(&tmp, 7, 1);           /* has_functions */
		pb_bytes(pb, 3, tmp.b, tmp.len);
	}
	for (i = 0; i < p->locations.n; i++) {
		const struct location *l = &p->locs[i];

		pb_reset(&tmp);
		pb_varint(&tmp, 1, i + 1);
		pb_varint_nz(&tmp, 2, map_no(p, l->mapping));
		pb_varint_nz(&tmp, 3, l->address);
		if (l->function) {
			pb_reset(&line);
			pb_varint(&line, 1, l->function);
			pb_varint_nz(&line, 2, (uint64_t)l->line);
			pb_bytes(&tmp, 4, line.b, line.len);
		}
		pb_bytes(pb, 4, tmp.b, tmp.len);
	}
	for (i = 0; i < p->functions.n; i++) {
		pb_reset(&tmp);
		pb_varint(&tmp, 1, i + 1);
		pb_varint_nz(&tmp, 2, p->funcs[i].name);
		pb_varint_nz(&tmp, 3, p->funcs[i].name);
		pb_varint_nz(&tmp, 4, p->funcs[i].filename);
		pb_bytes(pb, 5, tmp.b, tmp.len);
	}
	for (i = 0; i < p->strings.n; i++)
		pb_bytes(pb, 6, intern_key(&p->strings, i + 1), p->strings.e[i].len);
	value_type(p, pb, &tmp, 11, p->event[0] ? p->event : "events",
		   p->event_ns ? "nanoseconds" : "count");
	/* the view pprof opens with (else its last type): what --source says,
	 * the event's period or the calls' time (strings interned above) */
	if (calls && p->o->source == CV_CALLS)
		pb_varint(pb, 14, str_id(p, "wall", 4));
	else
		pb_varint(pb, 14, str_id(p, p->event[0] ? p->event : "events",
					  strlen(p->event[0] ? p->event : "events")));
	pb_free(&tmp);
	pb_free(&line);
	return pb->oom || tmp.oom || line.oom ? -ENOMEM : 0;
}

/* gzip, as pprof files are */
static int write_gzip(FILE *fp, const unsigned char *b, size_t n)
{
	unsigned char out[65536];
	z_stream z;
	int ret;

	memset(&z, 0, sizeof(z));
	if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	z.next_in = (unsigned char *)b;
	z.avail_in = (uInt)n;     /* profiles stay far below 4 GiB */
	do {
		z.next_out = out;
		z.avail_out = sizeof(out);
		ret = deflate(&z, Z_FINISH);
		if (ret == Z_STREAM_ERROR)
			break;
		fwrite(out, 1, sizeof(out) - z.avail_out, fp);
	} while (ret != Z_STREAM_END);
	deflateEnd(&z);
	return ret == Z_STREAM_END && !ferror(fp) ? 0 : -EIO;
}

static int pprof_end(void *w)
{
	struct pprof *p = w;
	struct pb pb = { 0 };
	int ret = encode(p, &pb);

	if (!ret)
		ret = write_gzip(p->out->fp, pb.b, pb.len);
	pb_free(&pb);
	return ret;
}

static void pprof_free(void *w)
{
	struct pprof *p = w;

	if (!p)
		return;
	intern_free(&p->strings);
	intern_free(&p->functions);
	intern_free(&p->mappings);
	intern_free(&p->locations);
	intern_free(&p->stacks);
	free(p->maps);
	free(p->locs);
	free(p->funcs);
	free(p->values);
	free(p->labels);
	free(p->ids);
	callpath_free(&p->paths);
	free(p);
}

const struct cv_ops cv_pprof_ops = {
	.what   = "pprof",
	.flags  = CV_CALL_STACKS | CV_ALWAYS_CALL_STACKS | CV_RAW_FRAMES,
	.begin  = pprof_begin,
	.sample = pprof_sample,
	.call   = pprof_call,
	.end    = pprof_end,
	.free   = pprof_free,
};
