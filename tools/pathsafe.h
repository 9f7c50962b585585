/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Names others may control.  The rule of the command: a name the user gave
 * (an output file, -o DIR, --elf DIR) may be a symbolic link the user made,
 * and is followed as a shell redirection follows it; a temporary or derived
 * name (DIR.old, DIR/INDEX-NAME.elf, .NAME.XXXXXX) is never followed, and
 * never opened if it exists.
 */
#ifndef JITPERF_PATHSAFE_H
#define JITPERF_PATHSAFE_H

/*
 * Was a link or FIFO on the way to path planted by someone else?  In a
 * sticky world-writable directory (/tmp), a symbolic link or a FIFO that
 * belongs neither to us nor to the directory's owner was put there by
 * another user: 1 and *why says which ("a symbolic link of another user in
 * a sticky directory"); else 0.  Every link followed to path is checked,
 * as the kernel's protected_symlinks/protected_fifos would (they may be
 * off, and they do not cover realpath()).
 */
int pathsafe_planted(const char *path, const char **why);

/*
 * Remove path and everything under it without following any symbolic
 * link, also one put in place of a directory while it is being removed.
 * 0 or -errno.
 */
int pathsafe_remove_tree(const char *path);

#endif /* JITPERF_PATHSAFE_H */
