# JP_LLVM: find llvm-config for libjitperf-llvm (LLVM 14 to 19).
#   --with-llvm          look for it, fail if there is none
#   --with-llvm=PATH     use this llvm-config (or PATH/bin/llvm-config)
#   --without-llvm       do not build libjitperf-llvm
#   (default)            build it when an llvm-config of LLVM 14-19 is found
# Sets LLVM_CONFIG, LLVM_VERSION, LLVM_CFLAGS (C API headers), LLVM_CXXFLAGS,
# LLVM_LDFLAGS, LLVM_LIBS, LLVM_INCLUDEDIR, and the conditional HAVE_LLVM.
# LLVM's headers are included with -isystem: their warnings are not ours.
AC_DEFUN([JP_LLVM], [
	AC_ARG_WITH([llvm],
		[AS_HELP_STRING([--with-llvm@<:@=PATH@:>@],
			[build libjitperf-llvm with this llvm-config (LLVM 14 to 19; default: when one is found)])],
		[], [with_llvm=check])
	LLVM_CONFIG=
	jp_llvm_why=
	AS_CASE([$with_llvm],
		[no], [jp_llvm_why="--without-llvm"],
		[yes|check], [
			for jp_c in llvm-config llvm-config-19 llvm-config-18 llvm-config-17 \
				    llvm-config-16 llvm-config-15 llvm-config-14; do
				jp_p=`command -v $jp_c 2>/dev/null` || continue
				jp_v=`$jp_p --version 2>/dev/null | sed 's/\..*//'`
				AS_IF([test "$jp_v" -ge 14 2>/dev/null && test "$jp_v" -le 19], [
					LLVM_CONFIG=$jp_p
					break
				])
			done
			AS_IF([test -z "$LLVM_CONFIG"], [jp_llvm_why="no llvm-config of LLVM 14 to 19 found"])],
		[
			AS_IF([test -d "$with_llvm" && test -x "$with_llvm/bin/llvm-config"],
				[LLVM_CONFIG=$with_llvm/bin/llvm-config],
				[LLVM_CONFIG=$with_llvm])
			AS_IF([test -x "$LLVM_CONFIG"], [],
				[AC_MSG_ERROR([--with-llvm=$with_llvm: no llvm-config there])])])
	AS_IF([test -n "$LLVM_CONFIG"], [
		AC_MSG_CHECKING([the LLVM of $LLVM_CONFIG])
		LLVM_VERSION=`$LLVM_CONFIG --version`
		jp_v=`echo "$LLVM_VERSION" | sed 's/\..*//'`
		AC_MSG_RESULT([$LLVM_VERSION])
		AS_IF([test "$jp_v" -ge 14 2>/dev/null && test "$jp_v" -le 19], [], [
			jp_llvm_why="LLVM $LLVM_VERSION is not 14 to 19"
			AS_IF([test "x$with_llvm" != xcheck], [AC_MSG_ERROR([$LLVM_CONFIG: $jp_llvm_why])])
			LLVM_CONFIG=])])
	AS_IF([test -n "$LLVM_CONFIG"], [
		LLVM_INCLUDEDIR=`$LLVM_CONFIG --includedir`
		LLVM_CFLAGS=`$LLVM_CONFIG --cflags | sed 's/-I */-isystem /g'`
		LLVM_CXXFLAGS=`$LLVM_CONFIG --cxxflags | sed 's/-I */-isystem /g'`
		# LLVM built without RTTI: a class derived from its listener must do without too
		AS_IF([test "x`$LLVM_CONFIG --has-rtti`" = xNO], [LLVM_CXXFLAGS="$LLVM_CXXFLAGS -fno-rtti"])
		# the run-time linker must find a libLLVM outside the system's directories
		LLVM_LDFLAGS="`$LLVM_CONFIG --ldflags` -Wl,-rpath,`$LLVM_CONFIG --libdir`"
		LLVM_LIBS="`$LLVM_CONFIG --libs` `$LLVM_CONFIG --system-libs`"
		AC_LANG_PUSH([C++])
		jp_save_CXXFLAGS=$CXXFLAGS
		CXXFLAGS="$CXXFLAGS $LLVM_CXXFLAGS"
		AC_MSG_CHECKING([whether $CXX compiles against LLVM's headers])
		AC_COMPILE_IFELSE([AC_LANG_PROGRAM([[#include <llvm/ExecutionEngine/JITEventListener.h>]],
						   [[return 0;]])],
			[AC_MSG_RESULT([yes])],
			[AC_MSG_RESULT([no])
			 jp_llvm_why="$CXX cannot compile against the headers of $LLVM_CONFIG"
			 AS_IF([test "x$with_llvm" != xcheck], [AC_MSG_ERROR([$jp_llvm_why])])
			 LLVM_CONFIG=])
		CXXFLAGS=$jp_save_CXXFLAGS
		AC_LANG_POP([C++])])
	AC_SUBST([LLVM_CONFIG])
	AC_SUBST([LLVM_VERSION])
	AC_SUBST([LLVM_INCLUDEDIR])
	AC_SUBST([LLVM_CFLAGS])
	AC_SUBST([LLVM_CXXFLAGS])
	AC_SUBST([LLVM_LDFLAGS])
	AC_SUBST([LLVM_LIBS])
	AM_CONDITIONAL([HAVE_LLVM], [test -n "$LLVM_CONFIG"])
	AS_IF([test -n "$LLVM_CONFIG"], [jp_llvm_summary="LLVM $LLVM_VERSION ($LLVM_CONFIG)"],
	      [jp_llvm_summary="no ($jp_llvm_why: libjitperf-llvm not built)"])
])

# JP_WARN_CXXFLAGS(FLAGS): append each flag the C++ compiler accepts to WARN_CXXFLAGS.
AC_DEFUN([JP_WARN_CXXFLAGS], [
	AC_LANG_PUSH([C++])
	for jp_flag in $1; do
		AC_MSG_CHECKING([whether $CXX accepts $jp_flag])
		jp_save_CXXFLAGS=$CXXFLAGS
		CXXFLAGS="$CXXFLAGS -Werror $jp_flag"
		AC_COMPILE_IFELSE([AC_LANG_PROGRAM([], [])],
			[AC_MSG_RESULT([yes]); WARN_CXXFLAGS="$WARN_CXXFLAGS $jp_flag"],
			[AC_MSG_RESULT([no])])
		CXXFLAGS=$jp_save_CXXFLAGS
	done
	AC_LANG_POP([C++])
	AC_SUBST([WARN_CXXFLAGS])
])
