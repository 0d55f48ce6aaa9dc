/*
 * Logging. Each .c file defines SFS_LOG_FAC (a short facility name such as
 * "meta") before including this header. Levels are checked before anything is
 * formatted. STRIPEFS_LOG_MASK="all=info,meta=debug" sets levels per facility;
 * STRIPEFS_LOG_FILE appends to a file instead of stderr (sfs_log_tunables). A
 * malformed mask or a file that cannot be opened is said once, in the log.
 *
 * Lines look like:
 *   2026-11-29T23:10:01.123456 [rank 3 meta] chunk 12: short write on target 101
 */
#ifndef SFS_LOG_H
#define SFS_LOG_H

#include "sfs_tunable.h"

#include <stdarg.h>

typedef enum {
    SFS_LOG_FATAL = 0,
    SFS_LOG_ERROR,
    SFS_LOG_WARN,
    SFS_LOG_INFO,
    SFS_LOG_DEBUG,
    SFS_LOG_TRACE,
} sfs_log_level_t;

typedef struct sfs_log_fac {
    const char *name;
    int         level; /* -1 until resolved from STRIPEFS_LOG_MASK */
    unsigned    generation;
} sfs_log_fac_t;

#ifndef SFS_LOG_FAC
#error "define SFS_LOG_FAC before including sfs_log.h"
#endif

static sfs_log_fac_t sfs_log_fac_this __attribute__((unused)) = {SFS_LOG_FAC, -1, 0};

/* STRIPEFS_LOG_MASK and STRIPEFS_LOG_FILE. */
extern const sfs_tunable_table_t sfs_log_tunables;

int  sfs_log_level_of(sfs_log_fac_t *fac);
void sfs_log_emit(sfs_log_fac_t *fac, sfs_log_level_t level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The default level for facilities STRIPEFS_LOG_MASK does not name (WARN unless set). */
void sfs_log_set_default_level(sfs_log_level_t level);
/* Text shown before the facility in every line, e.g. "rank 3" or "client 1234". */
void sfs_log_set_identity(const char *identity);
/* Parse a level name ("error", "info", ...); returns -1 if unknown. */
int sfs_log_level_parse(const char *name);

#define sfs_log(_level, ...)                                                                       \
    do {                                                                                           \
        if ((int)(_level) <= sfs_log_level_of(&sfs_log_fac_this)) {                                \
            sfs_log_emit(&sfs_log_fac_this, (_level), __VA_ARGS__);                                \
        }                                                                                          \
    } while (0)

#define sfs_fatal(...) sfs_log(SFS_LOG_FATAL, __VA_ARGS__)
#define sfs_error(...) sfs_log(SFS_LOG_ERROR, __VA_ARGS__)
#define sfs_warn(...)  sfs_log(SFS_LOG_WARN, __VA_ARGS__)
#define sfs_info(...)  sfs_log(SFS_LOG_INFO, __VA_ARGS__)
#define sfs_debug(...) sfs_log(SFS_LOG_DEBUG, __VA_ARGS__)
#define sfs_trace(...) sfs_log(SFS_LOG_TRACE, __VA_ARGS__)

#endif
