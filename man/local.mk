# man/ - section 1 (the command), 3 (the library), 5 (file formats).
dist_man_MANS += man/jitperf.1 man/jitperf-record.1 man/jitperf-report.1 \
	man/jitperf-convert.1 man/jitperf-dump.1 man/jitperf-inject.1
dist_man_MANS += man/libjitperf.3 man/jitperf_open.3 man/jitperf_close.3 man/jitperf_default.3 \
	man/jitperf_outputs.3 man/jitperf_strerror.3 man/jitperf_set_log.3 man/jitperf_code_load.3 \
	man/jitperf_code_load_ex.3 man/jitperf_code_move.3 man/jitperf_code_unload.3 \
	man/jitperf_fn_register.3 man/jitperf_enter.3 man/jitperf_exit.3 \
	man/jitperf_wrap.3 man/libjitperf-cyg.3 \
	man/jitperf_tier_name.3 man/jitperf_tier_request.3 man/jitperf_compile_begin.3 \
	man/jitperf_compile_end.3 man/jitperf_trampoline.3
dist_man_MANS += man/jitperf-trace.5 man/jitperf-stats.5 man/jitperf-tiers.5
# libjitperf-llvm: installed with the library, distributed always
if HAVE_LLVM
dist_man_MANS += man/libjitperf-llvm.3 man/jitperf_llvm_event_listener.3 \
	man/jitperf_llvm_instrument_module.3
endif
EXTRA_DIST += man/libjitperf-llvm.3 man/jitperf_llvm_event_listener.3 \
	man/jitperf_llvm_instrument_module.3
