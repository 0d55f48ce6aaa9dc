/*
 * One error space for all of stripefs: functions return 0 on success or a
 * negative errno on failure. The function that detects an error records a
 * human-readable detail (which file, target or server) with
 * sfs_error_set(); callers that pass the code on leave the detail alone.
 */
#ifndef SFS_ERRNO_H
#define SFS_ERRNO_H

#include <errno.h>
#include <stddef.h>

#define SFS_OK 0

/* Size of the per-thread error detail buffer, including the NUL. */
#define SFS_ERROR_DETAIL_MAX 512

/* Name and description of a negative errno, e.g. "ENOENT (No such file or
 * directory)". Never returns NULL; the string is static. */
const char *sfs_strerror(int rc);

/* Symbolic name of a negative errno ("ENOENT"), or "E?" for unknown codes. */
const char *sfs_errno_name(int rc);

/* Record the detail of the error that is about to be returned, printf-style,
 * for this thread, and return rc so a caller can write
 * `return sfs_error_set(-ENOENT, "no such file %s", path);`. */
int sfs_error_set(int rc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The detail recorded last by this thread ("" if none). */
const char *sfs_error_detail(void);

/* Forget the recorded detail. */
void sfs_error_clear(void);

#endif
