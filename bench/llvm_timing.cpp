/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bench/llvm_timing.cpp - see llvm_timing.h. */
#include "config.h"

#include <time.h>
#include <unistd.h>
#include <vector>

#include <llvm/ExecutionEngine/JITEventListener.h>

#include "bench/llvm_timing.h"

namespace {

/*
 * Both clocks around each call: CLOCK_MONOTONIC (read in user space), and
 * the CPU time of the whole process (every thread, a system call to read),
 * so that work a listener hands to a thread of its own is counted too.
 */
double now_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

class Timed final : public llvm::JITEventListener {
public:
	Timed(llvm::JITEventListener *a, llvm::JITEventListener *b, struct bench_lap *l,
	      size_t c, size_t *count)
		: inner{ a, b }, laps(l), cap(c), n(count)
	{
		/* what reading the clocks costs, taken off every lap */
		double t0 = now_ns(CLOCK_MONOTONIC);

		for (int i = 0; i < 1000; i++) {
			now_ns(CLOCK_MONOTONIC);
			now_ns(CLOCK_PROCESS_CPUTIME_ID);
		}
		clock_cost = (now_ns(CLOCK_MONOTONIC) - t0) / 1000;
	}

	void notifyObjectLoaded(ObjectKey key, const llvm::object::ObjectFile &obj,
				const llvm::RuntimeDyld::LoadedObjectInfo &info) override
	{
		struct bench_lap lap;
		int first = *n % 2;     /* a first, then b first, ... */

		for (int k = 0; k < 2; k++) {
			int i = k ? !first : first;
			double c0 = now_ns(CLOCK_PROCESS_CPUTIME_ID), t0 = now_ns(CLOCK_MONOTONIC);

			inner[i]->notifyObjectLoaded(key, obj, info);
			lap.ns[i] = now_ns(CLOCK_MONOTONIC) - t0;
			lap.cpu[i] = now_ns(CLOCK_PROCESS_CPUTIME_ID) - c0 - clock_cost;
		}
		if (*n < cap)
			laps[(*n)++] = lap;
	}

	void notifyFreeingObject(ObjectKey key) override
	{
		inner[0]->notifyFreeingObject(key);
		inner[1]->notifyFreeingObject(key);
	}

private:
	llvm::JITEventListener *inner[2];
	struct bench_lap *laps;
	size_t cap, *n;
	double clock_cost;
};

class Floor final : public llvm::JITEventListener {
public:
	Floor(int mfd, size_t mlen, int dfd, size_t dlen)
		: map_fd(mfd), dump_fd(dfd), map_len(mlen), dump_len(dlen),
		  bytes(mlen > dlen ? mlen : dlen, 'x') {}

	void notifyObjectLoaded(ObjectKey, const llvm::object::ObjectFile &,
				const llvm::RuntimeDyld::LoadedObjectInfo &) override
	{
		if (map_len && write(map_fd, bytes.data(), map_len) < 0)
			return;
		if (write(dump_fd, bytes.data(), dump_len) < 0)
			return;
	}

private:
	int map_fd, dump_fd;
	size_t map_len, dump_len;
	std::vector<char> bytes;
};

} /* namespace */

LLVMJITEventListenerRef bench_timed(LLVMJITEventListenerRef a, LLVMJITEventListenerRef b,
				    struct bench_lap *laps, size_t c, size_t *count)
{
	return llvm::wrap(static_cast<llvm::JITEventListener *>(
		new Timed(llvm::unwrap(a), llvm::unwrap(b), laps, c, count)));
}

LLVMJITEventListenerRef bench_floor(int map_fd, size_t map_len, int dump_fd, size_t dump_len)
{
	return llvm::wrap(static_cast<llvm::JITEventListener *>(
		new Floor(map_fd, map_len, dump_fd, dump_len)));
}
