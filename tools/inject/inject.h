/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Parts of `jitperf inject` (inject.c, pdcopy.c, image.c, ehframe.c,
 * dwline.c): a code image is one ELF file holding many JIT functions,
 * packed one after the other, each mapped into the process by its own
 * PERF_RECORD_MMAP2 whose pgoff is the function's offset in the file
 * (doc/inject.md).
 */
#ifndef JITPERF_INJECT_H
#define JITPERF_INJECT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

/* a growing byte buffer */
struct ij_buf {
	unsigned char *p;
	size_t         len, cap;
};
int ij_buf_put(struct ij_buf *b, const void *data, size_t len);
int ij_buf_uleb(struct ij_buf *b, uint64_t v);
int ij_buf_sleb(struct ij_buf *b, int64_t v);

struct ij_sym {
	uint64_t vaddr, size;
	uint32_t name;             /* offset in the image's string table */
};

struct ij_fde {                    /* one FDE of the image's .eh_frame */
	uint64_t target;           /* the function's first byte (image address) */
	uint32_t fde;              /* offset of the FDE in .eh_frame */
	uint32_t field;            /* offset of its pc_begin in .eh_frame */
	uint8_t  enc;              /* pc_begin encoding (pcrel or absptr, 4 or 8 bytes) */
};

struct ij_srcline {                /* one DEBUG_INFO entry */
	uint64_t    addr;          /* run-time address */
	uint32_t    line;
	const char *file;
};

struct ij_seg {                    /* bytes of .text at va, from text.p + off */
	uint64_t va;
	size_t   off, len;
};

struct ij_image {
	char          *path;       /* where the image goes (the mmap events name it) */
	char          *tmp;        /* where it is written until ij_image_commit */
	struct stat    st;         /* of tmp: the mmap events' inode and device */
	uint16_t       machine;
	struct ij_buf  text;       /* the functions' bytes, packed; segs says where each goes */
	struct ij_seg *segs;       /* in the order added */
	size_t         nsegs, segcap;
	uint64_t       text_len;   /* .text's size: the span from base, zeros between functions */
	int            nocode;     /* a perf map's: no bytes, .text is SHT_NOBITS */
	struct ij_buf  strtab;
	struct ij_sym *syms;
	size_t         nsyms, symcap;
	struct ij_buf  eh;         /* .eh_frame, pc_begin fields patched at write time */
	struct ij_fde *fdes;
	size_t         nfdes, fdecap;
	struct ij_buf  lineprog;   /* .debug_line's program, without its header */
	char         **files;      /* .debug_line's file names, 1-based in the program */
	size_t         nfiles, filecap;
	void          *filehash;   /* file name -> number (tsearch) */
	uint64_t       eh_skipped; /* functions whose unwind info could not be used */
	uint64_t       base;       /* lowest run-time address of its functions (at IJ_TEXT_OFF) */
	uint64_t       end;        /* highest run-time end of its functions */
	uint64_t       first_time; /* its first CODE_LOAD's time */
	uint64_t       planned;    /* bytes the plan put in it (plan.c) */
	void          *taken;      /* the plan's ranges, a tsearch tree (plan.c) */
	uint32_t       pid;
	uint64_t       eh_vaddr;   /* where the unwind tables are mapped (0: not yet) */
	uint8_t        build_id[20];
};

/*
 * Zeros an image may hold beyond its code's bytes (the holes between its
 * functions), and the largest distance of its unwind tables from its code.
 */
#define IJ_MAX_GAP (1u << 20)

/* vaddr (= file offset) of an image's .text */
#define IJ_TEXT_OFF 0x1000u

/*
 * Create the image at path: an empty temporary file beside it, closed
 * (an image holds no file open), written by ij_image_write and renamed
 * by ij_image_commit.  0 or -errno (message printed).
 */
int ij_image_open(struct ij_image *im, const char *path, uint16_t machine);

/*
 * Add a function at its run-time address's place: the image mirrors the
 * process's code, base (set by the plan, plan.c) at IJ_TEXT_OFF.  lines (may be NULL) are
 * DEBUG_INFO entries with run-time addresses; unwind (may be NULL) is the
 * function's .eh_frame as the emitter placed it, ALIGN8(size) after the
 * code.  *vaddr gets the function's address in the image (its file
 * offset).  0 or -ENOMEM.
 */
struct ij_func {
	const char    *name;
	uint64_t       code_addr, size;
	const void    *code;
	const struct ij_srcline *lines;
	size_t         nlines;
	const void    *unwind;              /* eh_frame then eh_frame_hdr */
	uint64_t       unwind_size, eh_frame_hdr_size, mapped_size;
};
int ij_image_add(struct ij_image *im, const struct ij_func *fn, uint64_t *vaddr);

/* Its build-id, from its functions: once all are added, before ij_image_write. */
void ij_image_build_id(struct ij_image *im);
/* Write the ELF file (libelf); .text is laid out only now, one image at a
 * time.  0 or -errno (message printed). */
int ij_image_write(struct ij_image *im);
/* Rename into place; 0 or -errno (message printed). */
int ij_image_commit(struct ij_image *im);
/* Free; an uncommitted temporary file is removed. */
void ij_image_close(struct ij_image *im);

/* ehframe.c: append a function's CIEs and FDEs; -EINVAL if they cannot be used. */
int ij_eh_add(struct ij_image *im, const unsigned char *eh, size_t len,
	      uint64_t code_addr, uint64_t size, uint64_t vaddr);
/* bytes of the unwind tables (.eh_frame with its terminator, .eh_frame_hdr), 0 if none */
uint64_t ij_eh_size(const struct ij_image *im);
/* file offset of .eh_frame: after .text, once every function is added */
uint64_t ij_eh_offset(const struct ij_image *im);
/* patch the pc_begin fields for .eh_frame at eh_vaddr, build .eh_frame_hdr at hdr_vaddr */
int ij_eh_finish(struct ij_image *im, uint64_t eh_vaddr, uint64_t hdr_vaddr,
		 struct ij_buf *hdr);

/* dwline.c: lines of one function into the program; the sections at the end */
int ij_lines_add(struct ij_image *im, const struct ij_func *fn, uint64_t vaddr);
int ij_lines_finish(struct ij_image *im, struct ij_buf *line, struct ij_buf *info,
		    struct ij_buf *abbrev);

/*
 * inject.c: perf.data in -> perf.data out with the JIT code's mmap events,
 * images written into imgdir.  0 or -errno (one message printed).
 */
int ij_inject(const char *in, const char *out, const char *imgdir);

#endif
