#define SFS_LOG_FAC "log"
#include "sfs_log.h"

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
static char           *sfs_log_mask; /* copy of SFS_LOG_MASK */
static int             sfs_log_initialized;

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

static void sfs_log_init_locked(void)
{
    const char *mask = getenv("SFS_LOG_MASK");
    const char *file = getenv("SFS_LOG_FILE");

    if (sfs_log_initialized) {
        return;
    }
    sfs_log_initialized = 1;
    sfs_log_mask        = mask ? strdup(mask) : NULL;
    sfs_log_stream      = NULL;
    if (file && *file) {
        sfs_log_stream = fopen(file, "a");
        if (sfs_log_stream) {
            setvbuf(sfs_log_stream, NULL, _IOLBF, 0);
        }
    }
}

/* Level for a facility from SFS_LOG_MASK ("all=info,meta=debug"); the last
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

void sfs_log_emit(sfs_log_fac_t *fac, sfs_log_level_t level, const char *fmt, ...)
{
    char           message[1024];
    char           stamp[40];
    struct timeval now;
    struct tm      tm;
    va_list        ap;
    FILE          *out;

    va_start(ap, fmt);
    vsnprintf(message, sizeof(message), fmt, ap);
    va_end(ap);

    gettimeofday(&now, NULL);
    localtime_r(&now.tv_sec, &tm);
    strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);

    pthread_mutex_lock(&sfs_log_lock);
    sfs_log_init_locked();
    out = sfs_log_stream ? sfs_log_stream : stderr;
    fprintf(out, "%s.%06ld [%s%s%s]%s%s %s\n", stamp, (long)now.tv_usec, sfs_log_identity,
            sfs_log_identity[0] ? " " : "", fac->name, level <= SFS_LOG_WARN ? " " : "",
            level <= SFS_LOG_WARN ? sfs_log_level_names[level] : "", message);
    fflush(out);
    pthread_mutex_unlock(&sfs_log_lock);
}
