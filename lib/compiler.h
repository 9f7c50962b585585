/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Attributes shared by libjitperf and libjitperf-cyg. */
#ifndef JITPERF_COMPILER_H
#define JITPERF_COMPILER_H

/* not exported from the shared object */
#define JP_HIDDEN __attribute__((visibility("hidden")))

/*
 * Probes and what they call must not be instrumented themselves: a
 * -finstrument-functions build would call the probes from the probes.
 */
#define JP_NOINSTR __attribute__((no_instrument_function))

#endif
