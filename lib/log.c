/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Where the library's diagnostics go: the JIT's own log when it gave a
 * function (jitperf_set_log), else stderr.  There are two levels. An
 * error is something the user asked for and does not get, such as a full
 * disk or calls left out of a full trace. It goes to stderr without a
 * hook. A debug message says what the library did and why; stderr sees it
 * only with JITPERF_DEBUG set.
 */
#include "config.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static jitperf_log_fn  log_fn;
static void           *log_arg;

/* JITPERF_DEBUG set, not empty and not 0; read as env.c reads the others
 * (secure_getenv: a set-ID program's caller does not choose) */
int jp_debug_enabled(void)
{
	const char *s = secure_getenv("JITPERF_DEBUG");

	return s && *s && strcmp(s, "0") != 0;
}

void jitperf_set_log(jitperf_log_fn fn, void *arg)
{
	pthread_mutex_lock(&log_lock);
	log_fn = fn;
	log_arg = fn ? arg : NULL;
	pthread_mutex_unlock(&log_lock);
}

static void vlog(int level, const char *fmt, va_list ap)
{
	jitperf_log_fn fn;
	char msg[1024];
	void *arg;

	pthread_mutex_lock(&log_lock);
	fn = log_fn;
	arg = log_arg;
	pthread_mutex_unlock(&log_lock);
	if (!fn && level == JITPERF_LOG_DEBUG && !jp_debug_enabled())
		return;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (fn)
		fn(level, msg, arg);      /* outside the lock: it may log again, or set another */
	else
		fprintf(stderr, "jitperf: %s\n", msg);
}

void jp_log_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(JITPERF_LOG_ERROR, fmt, ap);
	va_end(ap);
}

void jp_debug(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(JITPERF_LOG_DEBUG, fmt, ap);
	va_end(ap);
}
