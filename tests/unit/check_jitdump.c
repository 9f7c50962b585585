/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The jitdump file, read back byte by byte: header, marker mapping, every
 * record type (CODE_LOAD with name and code, DEBUG_INFO, UNWINDING_INFO with
 * the .eh_frame_hdr the library builds, CODE_MOVE, CODE_CLOSE), and what an
 * error leaves behind.
 */
#include "config.h"

#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#include "tests/check-subr.h"
#include "format/jitdump.h"

static char *dir;
static jitperf *jp;
static char dump_path[1024];
static unsigned char code[1024];

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void open_session(void)
{
	struct jitperf_options o = { .size = sizeof(o), .outputs = JITPERF_JITDUMP };

	o.dir = dir;
	ck_assert_int_eq(jitperf_open(&jp, &o), 0);
	ck_assert_uint_eq(jitperf_outputs(jp), JITPERF_JITDUMP);
	snprintf(dump_path, sizeof(dump_path), "%s/jit-%d.dump", dir, (int)getpid());
}

static void setup(void)
{
	clear_env();
	for (size_t i = 0; i < sizeof(code); i++)
		code[i] = (unsigned char)(i * 7 + 3 + i / 256 * 101);    /* no 64 bytes twice */
	dir = make_tmpdir();
	open_session();
}

static void teardown(void)
{
	ck_assert_int_eq(jitperf_close(jp), 0);
	jp = NULL;
	remove_tmpdir(dir);
}

/* ---- a small record walker */

struct dump {
	unsigned char *buf;
	size_t         len;
	size_t         off;     /* next record */
};

/* The records of the dump, which ends where they do: nothing after them. */
static void dump_read(struct dump *d)
{
	size_t off = sizeof(struct jitdump_file_header);

	d->buf = slurp(dump_path, &d->len);
	ck_assert_ptr_nonnull(d->buf);
	ck_assert_uint_ge(d->len, off);
	while (d->len - off >= sizeof(struct jitdump_record_header)) {
		struct jitdump_record_header r;

		memcpy(&r, d->buf + off, sizeof(r));
		if (r.total_size == 0 || r.total_size > d->len - off)
			break;
		off += r.total_size;
	}
	ck_assert_uint_eq(off, d->len);
	d->off = sizeof(struct jitdump_file_header);
}

/* The next record, checked to lie wholly inside the file; NULL at the end. */
static const unsigned char *next_record(struct dump *d, uint32_t *id, uint32_t *size, uint64_t *ts)
{
	struct jitdump_record_header r;
	const unsigned char *p;

	if (d->off == d->len)
		return NULL;
	ck_assert_uint_ge(d->len - d->off, sizeof(r));
	memcpy(&r, d->buf + d->off, sizeof(r));
	ck_assert_uint_ge(r.total_size, sizeof(r));
	ck_assert_uint_le(r.total_size, d->len - d->off);
	p = d->buf + d->off;
	d->off += r.total_size;
	*id = r.id;
	*size = r.total_size;
	*ts = r.timestamp;
	return p;
}

static unsigned elf_machine_of_self(void)
{
	GElf_Ehdr eh;
	Elf *e;
	int fd = open("/proc/self/exe", O_RDONLY);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_ne(elf_version(EV_CURRENT), EV_NONE);
	e = elf_begin(fd, ELF_C_READ, NULL);
	ck_assert_ptr_nonnull(e);
	ck_assert_ptr_nonnull(gelf_getehdr(e, &eh));
	elf_end(e);
	close(fd);
	return eh.e_machine;
}

static pid_t writer;     /* the process that wrote the dump, when not this one */

/* Check the CODE_LOAD at p: every field, the name and the code bytes. */
static void check_load(const unsigned char *p, uint32_t size, const char *name,
		       const void *addr, size_t len, uint64_t index)
{
	pid_t pid = writer ? writer : getpid();

	struct jitdump_code_load cl;
	size_t nlen = strlen(name) + 1;

	memcpy(&cl, p, sizeof(cl));
	ck_assert_uint_eq(cl.p.id, JIT_CODE_LOAD);
	ck_assert_uint_eq(size, sizeof(cl) + nlen + len);
	ck_assert_uint_eq(cl.pid, (uint32_t)pid);
	ck_assert_uint_eq(cl.tid, writer ? (uint32_t)pid : (uint32_t)syscall(SYS_gettid));
	ck_assert_uint_eq(cl.vma, (uintptr_t)addr);
	ck_assert_uint_eq(cl.code_addr, (uintptr_t)addr);
	ck_assert_uint_eq(cl.code_size, len);
	ck_assert_uint_eq(cl.code_index, index);
	ck_assert_mem_eq(p + sizeof(cl), name, nlen);
	ck_assert_mem_eq(p + sizeof(cl) + nlen, addr, len);
}

/* ---- header */

START_TEST(test_header)
{
	struct jitdump_file_header h;
	struct dump d;
	uint64_t after = mono_ns();

	dump_read(&d);
	memcpy(&h, d.buf, sizeof(h));
	ck_assert_uint_eq(h.magic, 0x4A695444u);
	ck_assert_mem_eq(d.buf, "DTiJ", 4);     /* little-endian hosts: "JiTD" read as u32 */
	ck_assert_uint_eq(h.version, 1);
	ck_assert_uint_eq(h.total_size, 40);
	ck_assert_uint_eq(sizeof(h), 40);
	ck_assert_uint_eq(h.elf_mach, elf_machine_of_self());
	ck_assert_uint_eq(h.pad1, 0);
	ck_assert_uint_eq(h.pid, (uint32_t)getpid());
	ck_assert_uint_ne(h.timestamp, 0);
	ck_assert_uint_le(h.timestamp, after);   /* CLOCK_MONOTONIC, taken at open */
	ck_assert_uint_eq(h.flags, 0);           /* not TSC */
	ck_assert_uint_eq(d.len, 40);            /* nothing else yet */
	free(d.buf);
}
END_TEST

static int marker_mapped(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char buf[1024];
	int found = 0;

	ck_assert_ptr_nonnull(f);
	while (fgets(buf, sizeof(buf), f))
		if (strstr(buf, dump_path) && strstr(buf, " r-xp "))
			found = 1;
	fclose(f);
	return found;
}

START_TEST(test_marker_mapping)
{
	/* perf record finds the dump by this PROT_READ|PROT_EXEC private mapping */
	ck_assert(marker_mapped());
	ck_assert_int_eq(jitperf_close(jp), 0);
	ck_assert(!marker_mapped());
	open_session();         /* for teardown */
}
END_TEST

START_TEST(test_stale_dump_replaced)
{
	char victim[700];
	unsigned char *v;
	struct dump d;
	size_t len;
	int fd;

	/* a symlink where our dump goes (a shared JITPERF_DIR): replaced, not followed */
	ck_assert_int_eq(jitperf_close(jp), 0);
	snprintf(victim, sizeof(victim), "%s/victim", dir);
	fd = open(victim, O_WRONLY | O_CREAT, 0644);
	ck_assert_int_eq(write(fd, "precious", 8), 8);
	close(fd);
	ck_assert_int_eq(unlink(dump_path), 0);
	ck_assert_int_eq(symlink(victim, dump_path), 0);
	open_session();
	v = slurp(victim, &len);
	ck_assert_uint_eq(len, 8);
	ck_assert_mem_eq(v, "precious", 8);
	free(v);
	dump_read(&d);
	ck_assert_uint_eq(d.len, 40);
	ck_assert_mem_eq(d.buf, "DTiJ", 4);
	free(d.buf);
}
END_TEST

/* ---- records */

START_TEST(test_code_load)
{
	uint64_t i1 = 0, i2 = 0, i3 = 0, ts, last;
	uint32_t id, size;
	const unsigned char *p;
	struct dump d;
	uint64_t before = mono_ns();

	ck_assert_int_eq(jitperf_code_load(jp, "alpha", code, 100, &i1), 0);
	ck_assert_int_eq(jitperf_code_load(jp, "beta with spaces", code + 128, 1, &i2), 0);
	ck_assert_int_eq(jitperf_code_load(jp, "", code + 256, 300, &i3), 0);
	ck_assert_uint_eq(i1, 1);
	ck_assert_uint_eq(i2, 2);
	ck_assert_uint_eq(i3, 3);

	dump_read(&d);
	memcpy(&last, d.buf + 24, 8);   /* header timestamp */
	p = next_record(&d, &id, &size, &ts);
	ck_assert_ptr_nonnull(p);
	check_load(p, size, "alpha", code, 100, 1);
	ck_assert_uint_ge(ts, before);
	ck_assert_uint_ge(ts, last);
	last = ts;
	p = next_record(&d, &id, &size, &ts);
	check_load(p, size, "beta with spaces", code + 128, 1, 2);
	ck_assert_uint_ge(ts, last);
	last = ts;
	p = next_record(&d, &id, &size, &ts);
	check_load(p, size, "", code + 256, 300, 3);
	ck_assert_uint_ge(ts, last);
	ck_assert_ptr_null(next_record(&d, &id, &size, &ts));
	free(d.buf);
}
END_TEST

START_TEST(test_debug_info)
{
	struct jitperf_line lines[3] = {
		{ (uintptr_t)code + 0,  10, 0, "prog.jc" },
		{ (uintptr_t)code + 17, 11, 2, "prog.jc" },
		{ (uintptr_t)code + 40, 7,  0, "lib/other.jc" },
	};
	struct jitperf_code c = { .size = sizeof(c), .name = "with_lines", .addr = code, .len = 64,
				  .lines = lines, .nlines = 3 };
	struct jitdump_debug_info di;
	struct jitdump_debug_entry e;
	uint64_t idx, ts, ts_load;
	uint32_t id, size, size_load;
	const unsigned char *p, *q, *load;
	struct dump d;
	size_t expect = sizeof(di);

	ck_assert_int_eq(jitperf_code_load_ex(jp, &c, &idx), 0);
	ck_assert_uint_eq(idx, 1);
	dump_read(&d);
	p = next_record(&d, &id, &size, &ts);
	ck_assert_uint_eq(id, JIT_CODE_DEBUG_INFO);     /* before the load it describes */
	memcpy(&di, p, sizeof(di));
	ck_assert_uint_eq(di.code_addr, (uintptr_t)code);
	ck_assert_uint_eq(di.nr_entry, 3);
	q = p + sizeof(di);
	for (int i = 0; i < 3; i++) {
		size_t fl = strlen(lines[i].file) + 1;

		memcpy(&e, q, sizeof(e));
		ck_assert_uint_eq(e.addr, lines[i].addr);       /* absolute run-time addresses */
		ck_assert_uint_eq(e.lineno, lines[i].line);
		ck_assert_uint_eq(e.discrim, lines[i].discrim);
		ck_assert_str_eq((const char *)q + sizeof(e), lines[i].file);
		q += sizeof(e) + fl;
		expect += sizeof(e) + fl;
	}
	ck_assert_uint_eq(size, (expect + 7) & ~(size_t)7);     /* padded to 8 with zeros */
	for (; q < p + size; q++)
		ck_assert_uint_eq(*q, 0);
	load = next_record(&d, &id, &size_load, &ts_load);
	check_load(load, size_load, "with_lines", code, 64, 1);
	ck_assert_uint_eq(ts, ts_load);
	ck_assert_ptr_null(next_record(&d, &id, &size, &ts));
	free(d.buf);
}
END_TEST

/*
 * An .eh_frame by the convention of jitperf.h for code of len bytes: one CIE
 * ("zR", FDE pointers pcrel|sdata4) and one FDE covering the whole code.
 */
static size_t make_eh_frame(unsigned char *eh, size_t len, int encoding)
{
	static const unsigned char cie[24] = {
		20, 0, 0, 0,            /* length */
		0, 0, 0, 0,             /* CIE id */
		1, 'z', 'R', 0,         /* version, augmentation */
		1, 0x78, 16,            /* code align 1, data align -8, return address r16 */
		1, 0x1b,                /* augmentation data: FDE encoding */
		0x0c, 7, 8,             /* DW_CFA_def_cfa rsp+8 */
		0x90, 1,                /* DW_CFA_offset r16, cfa-8 */
		0, 0,                   /* DW_CFA_nop padding */
	};
	int32_t pc_begin = -(int32_t)(((len + 7) & ~(size_t)7) + 32);
	uint32_t v;

	memcpy(eh, cie, sizeof(cie));
	eh[16] = (unsigned char)encoding;
	v = 16;
	memcpy(eh + 24, &v, 4);         /* FDE length */
	v = 28;
	memcpy(eh + 28, &v, 4);         /* CIE pointer: back to offset 0 */
	memcpy(eh + 32, &pc_begin, 4);  /* pc_begin, relative to itself at eh_addr + 32 */
	v = (uint32_t)len;
	memcpy(eh + 36, &v, 4);         /* pc_range */
	memset(eh + 40, 0, 4);          /* augmentation length 0, nops */
	return 44;
}

START_TEST(test_unwinding_info)
{
	unsigned char eh[64], hdr[20];
	size_t eh_len = make_eh_frame(eh, 100, 0x1b);
	struct jitperf_code c = { .size = sizeof(c), .name = "unwound", .addr = code, .len = 100,
				  .eh_frame = eh, .eh_frame_len = eh_len };
	struct jitdump_unwinding_info ui;
	uint64_t idx, ts, ts_load;
	uint32_t id, size, size_load, u32;
	int32_t s32;
	const unsigned char *p;
	struct dump d;
	int64_t hdr_off = 104 + (int64_t)eh_len;        /* hdr_addr - addr: align8(100) + eh_len */

	ck_assert_int_eq(jitperf_code_load_ex(jp, &c, &idx), 0);
	dump_read(&d);
	p = next_record(&d, &id, &size, &ts);
	ck_assert_uint_eq(id, JIT_CODE_UNWINDING_INFO);
	memcpy(&ui, p, sizeof(ui));
	ck_assert_uint_eq(ui.eh_frame_hdr_size, 20);            /* 12 + one table entry */
	ck_assert_uint_eq(ui.unwinding_size, eh_len + 20);
	ck_assert_uint_eq(ui.mapped_size, (eh_len + 20 + 7) & ~7u);
	ck_assert_uint_eq(size, sizeof(ui) + ((eh_len + 20 + 7) & ~7u));
	ck_assert_mem_eq(p + sizeof(ui), eh, eh_len);           /* .eh_frame as given */
	memcpy(hdr, p + sizeof(ui) + eh_len, 20);                /* then .eh_frame_hdr */
	ck_assert_uint_eq(hdr[0], 1);                            /* version */
	ck_assert_uint_eq(hdr[1], 0x1b);                         /* eh_frame_ptr: pcrel sdata4 */
	ck_assert_uint_eq(hdr[2], 0x03);                         /* fde_count: udata4 */
	ck_assert_uint_eq(hdr[3], 0x3b);                         /* table: datarel sdata4 */
	memcpy(&s32, hdr + 4, 4);
	ck_assert_int_eq(s32, -(int32_t)(eh_len + 4));           /* back to .eh_frame */
	memcpy(&u32, hdr + 8, 4);
	ck_assert_uint_eq(u32, 1);
	memcpy(&s32, hdr + 12, 4);
	ck_assert_int_eq(s32, -hdr_off);                         /* initial location = addr */
	memcpy(&s32, hdr + 16, 4);
	ck_assert_int_eq(s32, 24 - (int32_t)eh_len);             /* the FDE at eh_frame + 24 */
	p = next_record(&d, &id, &size_load, &ts_load);
	check_load(p, size_load, "unwound", code, 100, 1);
	ck_assert_uint_eq(ts, ts_load);
	free(d.buf);
}
END_TEST

/* Two FDEs, the later one for the lower half: the search table is sorted. */
START_TEST(test_unwinding_two_fdes)
{
	unsigned char eh[64];
	size_t eh_len = make_eh_frame(eh, 64, 0x1b);    /* CIE at 0, FDE at 24 */
	struct jitperf_code c = { .size = sizeof(c), .name = "two", .addr = code, .len = 64,
				  .eh_frame = eh };
	int32_t v, hdr_off;
	uint32_t id, size, u32;
	uint64_t ts;
	const unsigned char *p, *hdr;
	struct dump d;

	/* FDE 1 (offset 24) covers [32, 64); FDE 2 (offset 44) covers [0, 32) */
	memcpy(eh + 44, eh + 24, 20);
	v = 48;
	memcpy(eh + 48, &v, 4);                         /* CIE pointer: 48 back to 0 */
	v = 32 - (64 + 32);
	memcpy(eh + 32, &v, 4);                         /* pc_begin at eh+32 -> addr + 32 */
	u32 = 32;
	memcpy(eh + 36, &u32, 4);
	v = -(64 + 52);
	memcpy(eh + 52, &v, 4);                         /* pc_begin at eh+52 -> addr */
	memcpy(eh + 56, &u32, 4);
	eh_len = 64;
	c.eh_frame_len = eh_len;
	ck_assert_int_eq(jitperf_code_load_ex(jp, &c, NULL), 0);
	dump_read(&d);
	p = next_record(&d, &id, &size, &ts);
	ck_assert_uint_eq(id, JIT_CODE_UNWINDING_INFO);
	hdr = p + sizeof(struct jitdump_unwinding_info) + eh_len;
	memcpy(&u32, hdr + 8, 4);
	ck_assert_uint_eq(u32, 2);
	hdr_off = 64 + (int32_t)eh_len;                 /* hdr_addr - addr */
	memcpy(&v, hdr + 12, 4);
	ck_assert_int_eq(v, -hdr_off);                  /* addr first ... */
	memcpy(&v, hdr + 16, 4);
	ck_assert_int_eq(v, 44 - (int32_t)eh_len);      /* ... described by the FDE at 44 */
	memcpy(&v, hdr + 20, 4);
	ck_assert_int_eq(v, 32 - hdr_off);
	memcpy(&v, hdr + 24, 4);
	ck_assert_int_eq(v, 24 - (int32_t)eh_len);
	free(d.buf);
}
END_TEST

/*
 * Forty FDEs of 4 bytes each, written last to first: a search table too
 * big for the stack and too long for the insertion sort still comes out
 * in address order, each row naming its FDE.
 */
START_TEST(test_unwinding_many_fdes)
{
	enum { N = 40, LEN = 4 * N };
	unsigned char eh[24 + 20 * N];
	struct jitperf_code c = { .size = sizeof(c), .name = "many", .addr = code, .len = LEN,
				  .eh_frame = eh, .eh_frame_len = sizeof(eh) };
	int32_t eh_off = (LEN + 7) & ~7, hdr_off = eh_off + (int32_t)sizeof(eh), v;
	uint32_t id, size, u32;
	uint64_t ts;
	const unsigned char *p, *hdr;
	struct dump d;

	make_eh_frame(eh, LEN, 0x1b);
	for (int k = 0; k < N; k++) {
		int32_t at = 24 + 20 * k, covers = 4 * (N - 1 - k);

		memcpy(eh + at, eh + 24, 20);
		v = at + 4;
		memcpy(eh + at + 4, &v, 4);             /* CIE pointer: back to 0 */
		v = covers - (eh_off + at + 8);
		memcpy(eh + at + 8, &v, 4);             /* pc_begin, pcrel -> addr + covers */
		u32 = 4;
		memcpy(eh + at + 12, &u32, 4);
	}
	ck_assert_int_eq(jitperf_code_load_ex(jp, &c, NULL), 0);
	dump_read(&d);
	p = next_record(&d, &id, &size, &ts);
	ck_assert_uint_eq(id, JIT_CODE_UNWINDING_INFO);
	hdr = p + sizeof(struct jitdump_unwinding_info) + sizeof(eh);
	memcpy(&u32, hdr + 8, 4);
	ck_assert_uint_eq(u32, N);
	for (int i = 0; i < N; i++) {
		memcpy(&v, hdr + 12 + 8 * i, 4);
		ck_assert_int_eq(v, 4 * i - hdr_off);
		memcpy(&v, hdr + 16 + 8 * i, 4);        /* the FDE written for it */
		ck_assert_int_eq(v, eh_off + 24 + 20 * (N - 1 - i) - hdr_off);
	}
	free(d.buf);
}
END_TEST

START_TEST(test_debug_and_unwinding_together)
{
	unsigned char eh[64];
	struct jitperf_line line = { (uintptr_t)code + 8, 3, 0, "x.jc" };
	struct jitperf_code c = { .size = sizeof(c), .name = "both", .addr = code, .len = 16,
				  .lines = &line, .nlines = 1, .eh_frame = eh };
	uint32_t id, size;
	uint64_t ts;
	struct dump d;

	c.eh_frame_len = make_eh_frame(eh, 16, 0x1b);
	ck_assert_int_eq(jitperf_code_load(jp, "plain", code + 512, 8, NULL), 0);
	ck_assert_int_eq(jitperf_code_load_ex(jp, &c, NULL), 0);
	dump_read(&d);
	ck_assert_ptr_nonnull(next_record(&d, &id, &size, &ts));
	ck_assert_uint_eq(id, JIT_CODE_LOAD);
	ck_assert_ptr_nonnull(next_record(&d, &id, &size, &ts));
	ck_assert_uint_eq(id, JIT_CODE_DEBUG_INFO);
	ck_assert_ptr_nonnull(next_record(&d, &id, &size, &ts));
	ck_assert_uint_eq(id, JIT_CODE_UNWINDING_INFO);
	ck_assert_ptr_nonnull(next_record(&d, &id, &size, &ts));
	ck_assert_uint_eq(id, JIT_CODE_LOAD);
	ck_assert_ptr_null(next_record(&d, &id, &size, &ts));
	free(d.buf);
}
END_TEST

START_TEST(test_bad_eh_frame)
{
	unsigned char eh[64];
	struct jitperf_code c = { .size = sizeof(c), .name = "bad", .addr = code, .len = 100,
				  .eh_frame = eh };
	size_t before, after;
	unsigned char *buf;

	buf = slurp(dump_path, &before);
	free(buf);
	/* absolute pointers: perf cannot relocate them */
	c.eh_frame_len = make_eh_frame(eh, 100, 0x00);
	ck_assert_int_eq(jitperf_code_load_ex(jp, &c, NULL), -EINVAL);
	/* an FDE reaching past the code */
	c.eh_frame_len = make_eh_frame(eh, 100, 0x1b);
	c.len = 50;
	ck_assert_int_eq(jitperf_code_load_ex(jp, &c, NULL), -EINVAL);
	/* an FDE whose CIE pointer lands inside the CIE, not on it */
	c.eh_frame_len = make_eh_frame(eh, 100, 0x1b);
	eh[28] = 24;
	ck_assert_int_eq(jitperf_code_load_ex(jp, &c, NULL), -EINVAL);
	/* a length that is not a multiple of 4 */
	c.len = 100;
	c.eh_frame_len = 43;
	ck_assert_int_eq(jitperf_code_load_ex(jp, &c, NULL), -EINVAL);
	/* a NULL pointer with a length */
	c.eh_frame = NULL;
	c.eh_frame_len = 44;
	ck_assert_int_eq(jitperf_code_load_ex(jp, &c, NULL), -EINVAL);
	buf = slurp(dump_path, &after);
	free(buf);
	ck_assert_uint_eq(before, after);       /* nothing written */
}
END_TEST

START_TEST(test_move_and_unload)
{
	struct jitdump_code_move m;
	uint64_t idx, ts;
	uint32_t id, size;
	const unsigned char *p;
	struct dump d;

	ck_assert_int_eq(jitperf_code_load(jp, "mover", code, 32, &idx), 0);
	ck_assert_int_eq(jitperf_code_move(jp, idx, code + 512), 0);
	ck_assert_int_eq(jitperf_code_move(jp, 99, code), -ENOENT);
	ck_assert_int_eq(jitperf_code_move(jp, 0, code), -ENOENT);
	ck_assert_int_eq(jitperf_code_move(jp, idx, NULL), -EINVAL);
	ck_assert_int_eq(jitperf_code_unload(jp, idx), 0);
	ck_assert_int_eq(jitperf_code_unload(jp, idx), -ENOENT);
	ck_assert_int_eq(jitperf_code_move(jp, idx, code), -ENOENT);
	ck_assert_int_eq(jitperf_code_unload(jp, 12345), -ENOENT);

	dump_read(&d);
	p = next_record(&d, &id, &size, &ts);
	check_load(p, size, "mover", code, 32, 1);
	p = next_record(&d, &id, &size, &ts);
	ck_assert_uint_eq(id, JIT_CODE_MOVE);
	ck_assert_uint_eq(size, sizeof(m));
	memcpy(&m, p, sizeof(m));
	ck_assert_uint_eq(m.pid, (uint32_t)getpid());
	ck_assert_uint_eq(m.tid, (uint32_t)syscall(SYS_gettid));
	ck_assert_uint_eq(m.vma, (uintptr_t)code + 512);
	ck_assert_uint_eq(m.old_code_addr, (uintptr_t)code);
	ck_assert_uint_eq(m.new_code_addr, (uintptr_t)code + 512);
	ck_assert_uint_eq(m.code_size, 32);
	ck_assert_uint_eq(m.code_index, 1);
	/* unload has no jitdump record */
	ck_assert_ptr_null(next_record(&d, &id, &size, &ts));
	free(d.buf);
}
END_TEST

START_TEST(test_close_record)
{
	uint64_t ts, last = 0;
	uint32_t id = 0, size;
	struct dump d;

	ck_assert_int_eq(jitperf_code_load(jp, "f", code, 4, NULL), 0);
	ck_assert_int_eq(jitperf_close(jp), 0);
	jp = NULL;
	dump_read(&d);
	ck_assert_ptr_nonnull(next_record(&d, &id, &size, &last));
	ck_assert_ptr_nonnull(next_record(&d, &id, &size, &ts));
	ck_assert_uint_eq(id, JIT_CODE_CLOSE);
	ck_assert_uint_eq(size, 16);
	ck_assert_uint_ge(ts, last);
	ck_assert_ptr_null(next_record(&d, &id, &size, &ts));
	free(d.buf);
	open_session();         /* a new session truncates and starts over */
	dump_read(&d);
	ck_assert_uint_eq(d.len, 40);
	free(d.buf);
}
END_TEST

/* Each unit is in the file when its call returns: the file is its records, nothing after */
START_TEST(test_whole_units)
{
	struct stat st;
	struct dump d;
	uint32_t id, size;
	uint64_t ts;

	ck_assert_int_eq(jitperf_code_load(jp, "f", code, 64, NULL), 0);
	dump_read(&d);
	ck_assert_ptr_nonnull(next_record(&d, &id, &size, &ts));
	ck_assert_uint_eq(id, JIT_CODE_LOAD);
	ck_assert_ptr_null(next_record(&d, &id, &size, &ts));
	free(d.buf);
	ck_assert_int_eq(stat(dump_path, &st), 0);
	ck_assert_int_eq(st.st_size, 40 + size);
	ck_assert_int_eq(jitperf_code_load(jp, "g", code + 64, 64, NULL), 0);
	ck_assert_int_eq(stat(dump_path, &st), 0);
	ck_assert_int_eq(st.st_size, 40 + 2 * size);
	ck_assert_int_eq(jitperf_close(jp), 0);
	jp = NULL;
	ck_assert_int_eq(stat(dump_path, &st), 0);
	ck_assert_int_eq(st.st_size, 40 + 2 * size + 16);       /* and CODE_CLOSE */
	open_session();
}
END_TEST

/* ---- errors */

START_TEST(test_bad_arguments)
{
	struct jitperf_line line = { 0, 1, 0, "f" };
	struct jitperf_code c = { .size = sizeof(c), .name = "n", .addr = code, .len = 16,
				  .lines = &line, .nlines = 1 };
	uint64_t idx = 77;
	size_t before, after;
	unsigned char *buf = slurp(dump_path, &before);

	free(buf);
	ck_assert_int_eq(jitperf_code_load(jp, NULL, code, 16, &idx), -EINVAL);
	ck_assert_uint_eq(idx, 0);
	ck_assert_int_eq(jitperf_code_load(jp, "z", code, 0, NULL), -EINVAL);
	ck_assert_int_eq(jitperf_code_load(jp, "z", NULL, 16, NULL), -EINVAL);
	/* NULL: the default session, inactive here, not this one's file */
	ck_assert_int_eq(jitperf_code_load(NULL, "z", code, 16, NULL), 0);
	ck_assert_int_eq(jitperf_code_load_ex(jp, NULL, NULL), -EINVAL);
	/* a line address given as an offset instead of the absolute address */
	ck_assert_int_eq(jitperf_code_load_ex(jp, &c, NULL), -EINVAL);
	c.nlines = 1;
	c.lines = NULL;
	ck_assert_int_eq(jitperf_code_load_ex(jp, &c, NULL), -EINVAL);
	buf = slurp(dump_path, &after);
	free(buf);
	ck_assert_uint_eq(before, after);
	/* the session still works, and indices did not move */
	ck_assert_int_eq(jitperf_code_load(jp, "ok", code, 16, &idx), 0);
	ck_assert_uint_eq(idx, 1);
}
END_TEST

START_TEST(test_code_struct_size)
{
	struct {
		struct jitperf_code c;
		uint64_t future;
	} big;
	uint64_t idx;

	/* an older caller's struct, without the eh_frame fields: accepted */
	memset(&big, 0, sizeof(big));
	big.c.size = offsetof(struct jitperf_code, eh_frame);
	big.c.name = "old";
	big.c.addr = code;
	big.c.len = 8;
	big.c.eh_frame = (void *)1;     /* beyond its size: never read */
	big.c.eh_frame_len = 3;
	ck_assert_int_eq(jitperf_code_load_ex(jp, &big.c, &idx), 0);
	ck_assert_uint_eq(idx, 1);
	/* a newer caller's struct: accepted while the unknown tail is zero */
	big.c.size = sizeof(big);
	big.c.eh_frame = NULL;
	big.c.eh_frame_len = 0;
	ck_assert_int_eq(jitperf_code_load_ex(jp, &big.c, &idx), 0);
	ck_assert_uint_eq(idx, 2);
	big.future = 1;
	ck_assert_int_eq(jitperf_code_load_ex(jp, &big.c, &idx), -EINVAL);
	big.c.size = 0;
	ck_assert_int_eq(jitperf_code_load_ex(jp, &big.c, &idx), -EINVAL);
}
END_TEST

START_TEST(test_unusable_dir)
{
	struct jitperf_options o = { .size = sizeof(o), .outputs = JITPERF_JITDUMP };
	char path[600];
	jitperf *j2 = (jitperf *)1;
	int fd;

	/* a missing directory is made, parents too */
	snprintf(path, sizeof(path), "%s/missing/deeper", dir);
	o.dir = path;
	ck_assert_int_eq(jitperf_open(&j2, &o), 0);
	ck_assert_int_eq(jitperf_close(j2), 0);
	snprintf(path, sizeof(path), "%s/missing/deeper/jit-%d.dump", dir, (int)getpid());
	ck_assert_int_eq(access(path, F_OK), 0);
	j2 = (jitperf *)1;
	snprintf(path, sizeof(path), "%s/plainfile", dir);
	fd = open(path, O_CREAT | O_WRONLY, 0644);
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(jitperf_open(&j2, &o), -ENOTDIR);
	o.dir = "/proc/self";   /* no files can be created there, not even by root */
	ck_assert_int_lt(jitperf_open(&j2, &o), 0);
	ck_assert_ptr_null(j2);
}
END_TEST

/*
 * A full disk: a small tmpfs (root only; elsewhere this case says so and
 * ends), mounted in this test process's own mount namespace so that no
 * ending of the test can leave it mounted.
 */
START_TEST(test_full_disk)
{
	struct jitperf_options o = { .size = sizeof(o), .outputs = JITPERF_JITDUMP };
	char mnt[600], path[700];
	jitperf *full;
	int err = 0, n = 0;
	uint32_t id, size;
	uint64_t ts;
	struct dump d;

	snprintf(mnt, sizeof(mnt), "%s/small", dir);
	ck_assert_int_eq(mkdir(mnt, 0755), 0);
	if (mount_private_tmpfs(mnt, "16k") < 0) {
		fprintf(stderr, "check_jitdump: cannot mount a tmpfs (%s): full-disk case not run\n",
			strerror(errno));
		return;
	}
	o.dir = mnt;
	ck_assert_int_eq(jitperf_open(&full, &o), 0);
	while (!err && n < 500) {
		/* distinct code for each load (identical code would get a tail, see Twins) */
		err = jitperf_code_load(full, "filler", code + n, 512, NULL);
		if (!err)
			n++;
	}
	ck_assert_int_eq(err, -ENOSPC);
	ck_assert_int_gt(n, 0);
	/* still full: still an error, never a half record */
	ck_assert_int_eq(jitperf_code_load(full, "more", code + 500, 512, NULL), -ENOSPC);
	jitperf_close(full);    /* CODE_CLOSE may not fit: the file stays valid either way */

	snprintf(path, sizeof(path), "%s/jit-%d.dump", mnt, (int)getpid());
	snprintf(dump_path, sizeof(dump_path), "%s", path);
	dump_read(&d);
	for (int i = 0; i < n; i++) {
		const unsigned char *p = next_record(&d, &id, &size, &ts);

		ck_assert_ptr_nonnull(p);
		check_load(p, size, "filler", code + i, 512, (uint64_t)i + 1);
	}
	if (next_record(&d, &id, &size, &ts))
		ck_assert_uint_eq(id, JIT_CODE_CLOSE);
	ck_assert_ptr_null(next_record(&d, &id, &size, &ts));
	free(d.buf);
	ck_assert_int_eq(umount(mnt), 0);
	snprintf(dump_path, sizeof(dump_path), "%s/jit-%d.dump", dir, (int)getpid());
}
END_TEST

/* ---- identical code */

static void check_twin(const unsigned char *p, uint32_t size, const char *name,
		       const void *addr, size_t len, uint64_t index, size_t tail)
{
	struct jitdump_code_load cl;
	size_t nlen = strlen(name) + 1;

	memcpy(&cl, p, sizeof(cl));
	ck_assert_uint_eq(cl.code_size, len + tail);
	ck_assert_uint_eq(size, sizeof(cl) + nlen + len + tail);
	ck_assert_uint_eq(cl.code_addr, (uintptr_t)addr);
	ck_assert_uint_eq(cl.code_index, index);
	ck_assert_str_eq((const char *)p + sizeof(cl), name);
	ck_assert_mem_eq(p + sizeof(cl) + nlen, addr, len);             /* the real code first */
	ck_assert_mem_eq(p + sizeof(cl) + nlen + len, &index, tail);    /* then the index */
}

START_TEST(test_twins)
{
	static unsigned char twin[2][64];
	unsigned char eh[64];
	struct jitperf_code c = { .size = sizeof(c), .name = "twin_eh", .addr = twin[1], .len = 16,
				  .eh_frame = eh };
	uint32_t id, size;
	uint64_t ts;
	const unsigned char *p;
	struct dump d;

	memcpy(twin[0], code, 64);
	memcpy(twin[1], code, 64);
	c.eh_frame_len = make_eh_frame(eh, 16, 0x1b);
	ck_assert_int_eq(jitperf_code_load(jp, "first", twin[0], 7, NULL), 0);   /* 1 */
	ck_assert_int_eq(jitperf_code_load(jp, "second", twin[1], 7, NULL), 0);  /* 2: same bytes */
	ck_assert_int_eq(jitperf_code_load(jp, "third", twin[0], 16, NULL), 0);  /* 3: new */
	ck_assert_int_eq(jitperf_code_load(jp, "fourth", twin[1], 16, NULL), 0); /* 4: same as 3 */
	ck_assert_int_eq(jitperf_code_load_ex(jp, &c, NULL), 0);                 /* 5: same, eh_frame */

	dump_read(&d);
	p = next_record(&d, &id, &size, &ts);
	check_load(p, size, "first", twin[0], 7, 1);
	p = next_record(&d, &id, &size, &ts);
	check_twin(p, size, "second", twin[1], 7, 2, 1);        /* up to align8(7): 1 byte */
	p = next_record(&d, &id, &size, &ts);
	check_load(p, size, "third", twin[0], 16, 3);
	p = next_record(&d, &id, &size, &ts);
	check_twin(p, size, "fourth", twin[1], 16, 4, 8);       /* a multiple of 8: 8 bytes */
	p = next_record(&d, &id, &size, &ts);
	ck_assert_uint_eq(id, JIT_CODE_UNWINDING_INFO);
	p = next_record(&d, &id, &size, &ts);
	check_load(p, size, "twin_eh", twin[1], 16, 5);         /* a tail would move .eh_frame */
	ck_assert_ptr_null(next_record(&d, &id, &size, &ts));
	free(d.buf);
}
END_TEST

static Suite *jitdump_suite(void)
{
	Suite *s = suite_create("jitdump");
	TCase *tc;

	tc = tcase_create("File header");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_header);
	tcase_add_test(tc, test_marker_mapping);
	tcase_add_test(tc, test_stale_dump_replaced);
	suite_add_tcase(s, tc);

	tc = tcase_create("Records");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_code_load);
	tcase_add_test(tc, test_debug_info);
	tcase_add_test(tc, test_unwinding_info);
	tcase_add_test(tc, test_unwinding_two_fdes);
	tcase_add_test(tc, test_unwinding_many_fdes);
	tcase_add_test(tc, test_debug_and_unwinding_together);
	tcase_add_test(tc, test_move_and_unload);
	tcase_add_test(tc, test_close_record);
	tcase_add_test(tc, test_whole_units);
	tcase_add_test(tc, test_twins);
	suite_add_tcase(s, tc);

	tc = tcase_create("Errors leave the file valid");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_bad_eh_frame);
	tcase_add_test(tc, test_bad_arguments);
	tcase_add_test(tc, test_code_struct_size);
	tcase_add_test(tc, test_unusable_dir);
	tcase_add_test(tc, test_full_disk);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(jitdump_suite());
}
