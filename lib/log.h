/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The library's diagnostics (lib/log.c): to jitperf_set_log()'s function,
 * else to stderr, where a debug message goes only with JITPERF_DEBUG set.
 * Every layer may log; never from a probe.
 */
#ifndef JP_LOG_H
#define JP_LOG_H

#include "compiler.h"

/* cold: the paths that report an error are laid out away from the ones that work */
JP_HIDDEN void jp_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2), cold));
JP_HIDDEN void jp_log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2), cold));
JP_HIDDEN int jp_debug_enabled(void);

#endif
