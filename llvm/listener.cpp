/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * jitperf_llvm_event_listener: LLVM's JITEventListener interface on top of
 * libjitperf.  LLVM hands over each object once RuntimeDyld has loaded,
 * relocated and made it executable; everything is read from the object's
 * bytes and the run-time address of each of its sections (llvm/object.c):
 * no debug object copy, no DWARFContext, no LLVM symbol iteration.  The
 * object's functions then go to libjitperf together
 * (jitperf__code_load_batch, lib/codebatch.h): the records
 * jitperf_code_load_ex would write for each, with one write() per file for
 * the whole object.  All of it happens in the callback, on the JIT's
 * thread: when it returns, every function of the object is in the files,
 * with its lines and unwind info.
 */
#include "config.h"

#include <errno.h>
#include <new>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <llvm/ExecutionEngine/JITEventListener.h>
#include <llvm/ExecutionEngine/RuntimeDyld.h>
#include <llvm/Object/ObjectFile.h>
/* after LLVM's headers: its llvm::ELF enumerators have the names of these macros */
#include <elf.h>

#include "lib/codebatch.h"
#include "llvm/jitperf-llvm.h"
#include "llvm/llvm.h"

namespace {

/*
 * What reading a typical object allocates (lines, file names, unwind info,
 * the relocated debug sections) fits here, on the stack: see llvm/arena.c.
 */
constexpr size_t ARENA_SPACE = 16384;

class Listener final : public llvm::JITEventListener {
public:
	explicit Listener(jitperf *session) : jp(session) {}

	void notifyObjectLoaded(ObjectKey key, const llvm::object::ObjectFile &obj,
				const llvm::RuntimeDyld::LoadedObjectInfo &info) override;
	void notifyFreeingObject(ObjectKey key) override;

	jitperf *const jp;
	Listener *next = nullptr;       /* the list of listeners, one per session */

private:
	pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;   /* guards keys */
	struct jpl_keys *keys = nullptr;
};

void to_code(const struct jpl_func &f, struct jitperf_code *c)
{
	memset(c, 0, sizeof(*c));
	c->size = sizeof(*c);
	c->name = f.name;
	c->addr = reinterpret_cast<const void *>(static_cast<uintptr_t>(f.addr));
	c->len = f.len;
	c->lines = f.lines;
	c->nlines = f.nlines;
	c->eh_frame = f.eh_frame;
	c->eh_frame_len = f.eh_frame_len;
}

/* One function; an .eh_frame or lines it refuses do not cost the name. */
int load(jitperf *jp, struct jitperf_code c, uint64_t *index)
{
	int err = jitperf_code_load_ex(jp, &c, index);

	if (err == -EINVAL && (c.eh_frame || c.lines)) {
		jpl_debug("%s: unwind info or lines refused, registered without them", c.name);
		c.eh_frame = nullptr;
		c.eh_frame_len = 0;
		c.lines = nullptr;
		c.nlines = 0;
		err = jitperf_code_load_ex(jp, &c, index);
	}
	return err;
}

void Listener::notifyObjectLoaded(ObjectKey key, const llvm::object::ObjectFile &obj,
				  const llvm::RuntimeDyld::LoadedObjectInfo &info)
{
	unsigned outputs = jitperf_outputs(jp);
	unsigned char space[ARENA_SPACE];
	struct jpl_arena arena;
	struct jpl_object o;
	struct jitperf_code *code;
	uint64_t *addr, *idx;
	size_t nsec = 0, n = 0;
	llvm::StringRef data = obj.getData();
	Elf64_Ehdr hdr;
	void *aligned = nullptr;
	int err;

	if (!outputs || !obj.isELF())
		return;                         /* inactive: nothing to pay for */
	/* ELF64 (checked by jpl_object_read): the section table */
	if (data.size() < sizeof(hdr))
		return;
	memcpy(&hdr, data.data(), sizeof(hdr));
	if (hdr.e_ident[EI_CLASS] != ELFCLASS64 || hdr.e_shoff > data.size() ||
	    (size_t)hdr.e_shnum * sizeof(Elf64_Shdr) > data.size() - hdr.e_shoff)
		return;
	nsec = hdr.e_shnum;
	jpl_arena_init(&arena, space, sizeof(space));
	if (!(addr = static_cast<uint64_t *>(jpl_alloc(&arena, nsec * sizeof(*addr)))))
		goto out;
	memset(addr, 0, nsec * sizeof(*addr));
	/*
	 * Only allocated sections are loaded: only those are looked up, each
	 * by its own SectionRef.  An ELF object's SectionRef is the address
	 * of its section header (ELFObjectFile::toDRI), which saves walking
	 * LLVM's section list, whose getIndex() re-checks the whole table.
	 */
	for (size_t i = 1; i < nsec; i++) {
		const char *at = data.data() + hdr.e_shoff + i * sizeof(Elf64_Shdr);
		llvm::object::DataRefImpl dri;
		Elf64_Shdr sh;

		memcpy(&sh, at, sizeof(sh));
		if (!(sh.sh_flags & SHF_ALLOC) || !sh.sh_size)
			continue;
		dri.p = reinterpret_cast<uintptr_t>(at);
		addr[i] = info.getSectionLoadAddress(llvm::object::SectionRef(dri, &obj));
	}

	memset(&o, 0, sizeof(o));
	o.arena = &arena;
	o.image = reinterpret_cast<const unsigned char *>(data.data());
	o.size = data.size();
	if (reinterpret_cast<uintptr_t>(o.image) % 8) {
		/* the ELF structures are read in place: they must be aligned */
		if (!(aligned = malloc(o.size)))
			goto out;
		memcpy(aligned, o.image, o.size);
		o.image = static_cast<const unsigned char *>(aligned);
	}
	o.sec_addr = addr;
	o.nsec = nsec;
	/* lines and unwind info only go into a jitdump */
	o.want_lines = o.want_unwind = !!(outputs & JITPERF_JITDUMP);
	err = jpl_object_read(&o);
	if (err) {
		jpl_debug("cannot read a loaded object: %s", jitperf_strerror(err));
		goto out;
	}
	if (!(idx = static_cast<uint64_t *>(jpl_alloc(&arena, o.nfuncs * sizeof(*idx)))) ||
	    !(code = static_cast<struct jitperf_code *>(jpl_alloc(&arena,
								   o.nfuncs * sizeof(*code)))))
		goto out;
	for (size_t i = 0; i < o.nfuncs; i++)
		to_code(o.funcs[i], &code[i]);
	/* the whole object: one write() per file (lib/codebatch.h) */
	err = jitperf__code_load_batch(jp, code, o.nfuncs, idx);
	if (!err) {
		for (size_t i = 0; i < o.nfuncs; i++)
			if (idx[i])
				idx[n++] = idx[i];      /* 0: the session was closed meanwhile */
	} else if (err != -EINVAL && err != -E2BIG && err != -ENOMEM) {
		/* a write failed (full disk): neither file holds any of the object */
		jpl_debug("cannot register the object's %zu functions: %s", o.nfuncs,
			  jitperf_strerror(err));
	} else {
		/* one by one: a function whose lines or unwind info are refused keeps its
		 * name, and each needs less memory than the whole object */
		jpl_debug("the object's %zu functions refused at once (%s): one by one",
			  o.nfuncs, jitperf_strerror(err));
		for (size_t i = 0; i < o.nfuncs; i++) {
			err = load(jp, code[i], &idx[n]);
			if (err)
				jpl_debug("cannot register %s: %s", o.funcs[i].name,
					  jitperf_strerror(err));
			else if (idx[n])
				n++;
		}
	}
	if (n) {
		pthread_mutex_lock(&lock);
		err = jpl_keys_add(&keys, key, idx, n);
		pthread_mutex_unlock(&lock);
		if (err)
			jpl_debug("out of memory: the functions of an object stay loaded when it is freed");
	}
out:
	jpl_arena_free(&arena);
	free(aligned);
}

void Listener::notifyFreeingObject(ObjectKey key)
{
	uint64_t *idx;
	size_t n;

	pthread_mutex_lock(&lock);
	n = jpl_keys_take(keys, key, &idx);
	pthread_mutex_unlock(&lock);
	for (size_t i = 0; i < n; i++)
		jitperf_code_unload(jp, idx[i]);
	free(idx);
}

pthread_mutex_t listeners_lock = PTHREAD_MUTEX_INITIALIZER;
Listener *listeners;

} /* namespace */

LLVMJITEventListenerRef jitperf_llvm_event_listener(jitperf *jp)
{
	Listener *l;

	if (!jp)
		jp = jitperf_default();
	pthread_mutex_lock(&listeners_lock);
	for (l = listeners; l && l->jp != jp; l = l->next)
		;
	if (!l && (l = new (std::nothrow) Listener(jp))) {
		l->next = listeners;
		listeners = l;
	}
	pthread_mutex_unlock(&listeners_lock);
	if (!l) {
		errno = ENOMEM;
		return nullptr;
	}
	return llvm::wrap(static_cast<llvm::JITEventListener *>(l));
}
