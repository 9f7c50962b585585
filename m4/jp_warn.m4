# JP_WARN_CFLAGS(FLAGS): append each flag the C compiler accepts to WARN_CFLAGS.
AC_DEFUN([JP_WARN_CFLAGS], [
	AC_LANG_PUSH([C])
	for jp_flag in $1; do
		AC_MSG_CHECKING([whether $CC accepts $jp_flag])
		jp_save_CFLAGS=$CFLAGS
		CFLAGS="$CFLAGS -Werror $jp_flag"
		AC_COMPILE_IFELSE([AC_LANG_PROGRAM([], [])],
			[AC_MSG_RESULT([yes]); WARN_CFLAGS="$WARN_CFLAGS $jp_flag"],
			[AC_MSG_RESULT([no])])
		CFLAGS=$jp_save_CFLAGS
	done
	AC_LANG_POP([C])
	AC_SUBST([WARN_CFLAGS])
])
