/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bench/llvm_timing.cpp - see llvm_timing.h. */
#include "config.h"

#include <time.h>

#include <llvm/ExecutionEngine/JITEventListener.h>

#include "bench/llvm_timing.h"

namespace {

double cpu_ns()
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);    /* not the time others ran */
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

class Timed final : public llvm::JITEventListener {
public:
	Timed(llvm::JITEventListener *a, llvm::JITEventListener *b, struct bench_lap *l,
	      size_t c, size_t *count)
		: inner{ a, b }, laps(l), cap(c), n(count)
	{
		/* what reading the clock costs, taken off every lap */
		double t0 = cpu_ns();

		for (int i = 0; i < 1000; i++)
			cpu_ns();
		clock_cost = (cpu_ns() - t0) / 1001;
	}

	void notifyObjectLoaded(ObjectKey key, const llvm::object::ObjectFile &obj,
				const llvm::RuntimeDyld::LoadedObjectInfo &info) override
	{
		struct bench_lap lap;
		int first = *n % 2;     /* a first, then b first, ... */

		for (int k = 0; k < 2; k++) {
			int i = k ? !first : first;
			double t0 = cpu_ns();

			inner[i]->notifyObjectLoaded(key, obj, info);
			lap.ns[i] = cpu_ns() - t0 - clock_cost;
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

} /* namespace */

LLVMJITEventListenerRef bench_timed(LLVMJITEventListenerRef a, LLVMJITEventListenerRef b,
				    struct bench_lap *laps, size_t c, size_t *count)
{
	return llvm::wrap(static_cast<llvm::JITEventListener *>(
		new Timed(llvm::unwrap(a), llvm::unwrap(b), laps, c, count)));
}
