# JP_PTHREAD: glibc has pthreads in libc; just make sure -pthread works.
AC_DEFUN([JP_PTHREAD], [
	PTHREAD_CFLAGS=-pthread
	PTHREAD_LIBS=-pthread
	AC_SUBST([PTHREAD_CFLAGS])
	AC_SUBST([PTHREAD_LIBS])
])
