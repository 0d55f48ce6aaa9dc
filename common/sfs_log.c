/* Logging (sfs_log.h): levels per facility, a line per message, to stderr or
 * to STRIPEFS_LOG_FILE. */
#define SFS_LOG_FAC "log"
#include "sfs_log.h"

#include "sfs_errno.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/time.h>
#include <time.h>

static const char *const sfs_log_level_names[] = {"fatal", "error", "warn",
                                                  "info",  "debug", "trace"};

static pthread_mutex_t sfs_log_lock       = PTHREAD_MUTEX_INITIALIZER;
static int             sfs_log_default    = SFS_LOG_WARN;
static unsigned        sfs_log_generation = 1;
static char            sfs_log_identity[64];
static FILE           *sfs_log_stream;
static char           *sfs_log_mask; /* copy of STRIPEFS_LOG_MASK */
static int             sfs_log_initialized;

static int  sfs_log_mask_check(const sfs_tunable_t *entry, const char *text);
static void sfs_log_write_locked(const char *fac, sfs_log_level_t level, const char *message);

static const sfs_tunable_t sfs_log_tunable_entries[] = {
    {
        .name  = "STRIPEFS_LOG_MASK",
        .type  = SFS_TUNABLE_STRING,
        .help  = "log levels (fatal, error, warn, info, debug, trace): a bare level for every "
                 "facility, FAC=LEVEL for one, comma-separated, the last match wins "
                 "(\"all=info,meta=debug\"); default warn, servers info",
        .check = sfs_log_mask_check,
    },
    {
        .name = "STRIPEFS_LOG_FILE",
        .type = SFS_TUNABLE_STRING,
        .help = "append log lines to this file instead of writing them to stderr",
    },
};

const sfs_tunable_table_t sfs_log_tunables = SFS_TUNABLE_TABLE("log", sfs_log_tunable_entries);

int sfs_log_level_parse(const char *name)
{
    for (size_t i = 0; i < sizeof(sfs_log_level_names) / sizeof(sfs_log_level_names[0]); i++) {
        if (strcasecmp(name, sfs_log_level_names[i]) == 0) {
            return (int)i;
        }
    }
    if (strcasecmp(name, "warning") == 0) {
        return SFS_LOG_WARN;
    }
    return -1;
}

/* Every item is a level or FAC=LEVEL. */
static int sfs_log_mask_check(const sfs_tunable_t *entry, const char *text)
{
    char *copy = strdup(text), *save = NULL;
    int   rc = 0;

    if (!copy) {
        return -ENOMEM;
    }
    for (char *item = strtok_r(copy, ",", &save); item && rc == 0;
         item       = strtok_r(NULL, ",", &save)) {
        char *eq    = strchr(item, '=');
        char *level = eq ? eq + 1 : item;

        if ((eq && eq == item) || sfs_log_level_parse(level) < 0) {
            rc = sfs_error_set(-EINVAL,
                               "%s=%s: '%s' is not LEVEL or FACILITY=LEVEL (levels: fatal, "
                               "error, warn, info, debug, trace)",
                               entry->name, text, item);
        }
    }
    free(copy);
    return rc;
}

/* Reads the tunables, keeping the caller's error detail: the first log
 * call may come from a function that has just recorded one. A bad value is
 * said at once, whatever the levels. */
static void sfs_log_init_locked(void)
{
    char        saved[SFS_ERROR_DETAIL_MAX], problem[SFS_ERROR_DETAIL_MAX + 64];
    const char *mask = NULL, *file = NULL;

    if (sfs_log_initialized) {
        return;
    }
    sfs_log_initialized = 1;
    snprintf(saved, sizeof(saved), "%s", sfs_error_detail());
    sfs_log_stream = NULL;
    if (sfs_tunable_string(&sfs_log_tunables, "STRIPEFS_LOG_FILE", &file) == 0 && file) {
        sfs_log_stream = fopen(file, "a");
        if (sfs_log_stream) {
            setvbuf(sfs_log_stream, NULL, _IOLBF, 0);
        } else {
            snprintf(problem, sizeof(problem),
                     "STRIPEFS_LOG_FILE=%s: cannot open it (%s): logging to stderr", file,
                     strerror(errno));
            sfs_log_write_locked("log", SFS_LOG_WARN, problem);
        }
    }
    if (sfs_tunable_string(&sfs_log_tunables, "STRIPEFS_LOG_MASK", &mask) != 0) {
        snprintf(problem, sizeof(problem), "%s (its other items apply)", sfs_error_detail());
        sfs_log_write_locked("log", SFS_LOG_WARN, problem);
        mask = sfs_tunable_env(&sfs_log_tunables, "STRIPEFS_LOG_MASK");
    }
    sfs_log_mask = mask ? strdup(mask) : NULL;
    sfs_error_set(0, "%s", saved);
}

/* Level for a facility from STRIPEFS_LOG_MASK ("all=info,meta=debug"); the last
 * matching entry wins. */
static int sfs_log_resolve_locked(const char *fac)
{
    int   level = sfs_log_default;
    char *copy, *save = NULL, *item;

    if (!sfs_log_mask) {
        return level;
    }
    copy = strdup(sfs_log_mask);
    if (!copy) {
        return level;
    }
    for (item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(item, '=');
        int   parsed;

        if (!eq) {
            /* A bare level applies to all facilities. */
            parsed = sfs_log_level_parse(item);
            if (parsed >= 0) {
                level = parsed;
            }
            continue;
        }
        *eq    = '\0';
        parsed = sfs_log_level_parse(eq + 1);
        if (parsed >= 0 && (strcmp(item, "all") == 0 || strcmp(item, fac) == 0)) {
            level = parsed;
        }
    }
    free(copy);
    return level;
}

int sfs_log_level_of(sfs_log_fac_t *fac)
{
    /* Fast path: resolved for the current generation. A racy read is fine:
     * the worst case is one extra resolution under the lock. */
    if (__atomic_load_n(&fac->generation, __ATOMIC_ACQUIRE) ==
        __atomic_load_n(&sfs_log_generation, __ATOMIC_ACQUIRE)) {
        return fac->level;
    }
    pthread_mutex_lock(&sfs_log_lock);
    sfs_log_init_locked();
    fac->level = sfs_log_resolve_locked(fac->name);
    __atomic_store_n(&fac->generation, sfs_log_generation, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&sfs_log_lock);
    return fac->level;
}

void sfs_log_set_default_level(sfs_log_level_t level)
{
    pthread_mutex_lock(&sfs_log_lock);
    sfs_log_default = level;
    __atomic_add_fetch(&sfs_log_generation, 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&sfs_log_lock);
}

void sfs_log_set_identity(const char *identity)
{
    pthread_mutex_lock(&sfs_log_lock);
    snprintf(sfs_log_identity, sizeof(sfs_log_identity), "%s", identity ? identity : "");
    pthread_mutex_unlock(&sfs_log_lock);
}

static void sfs_log_write_locked(const char *fac, sfs_log_level_t level, const char *message)
{
    char           stamp[40];
    struct timeval now;
    struct tm      tm;
    FILE          *out = sfs_log_stream ? sfs_log_stream : stderr;

    gettimeofday(&now, NULL);
    localtime_r(&now.tv_sec, &tm);
    strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);
    fprintf(out, "%s.%06ld [%s%s%s]%s%s %s\n", stamp, (long)now.tv_usec, sfs_log_identity,
            sfs_log_identity[0] ? " " : "", fac, level <= SFS_LOG_WARN ? " " : "",
            level <= SFS_LOG_WARN ? sfs_log_level_names[level] : "", message);
    fflush(out);
}

void sfs_log_emit(sfs_log_fac_t *fac, sfs_log_level_t level, const char *fmt, ...)
{
    char    message[1024];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(message, sizeof(message), fmt, ap);
    va_end(ap);

    pthread_mutex_lock(&sfs_log_lock);
    sfs_log_init_locked();
    sfs_log_write_locked(fac->name, level, message);
    pthread_mutex_unlock(&sfs_log_lock);
}
