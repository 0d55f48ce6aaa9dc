/*
 * The attributes of recent listings, for the stats that follow them. A
 * directory page fetched with its entries' attributes (sfs_readdir_attrs,
 * one round trip for up to 256 entries) is kept here, past the stream that
 * fetched it: `ls -l` stats each entry as it reads it, `find` reads a whole
 * directory, closes it, then stats each entry (by fstatat on its parent's
 * descriptor). A page fetched plain is remembered by its range of names:
 * the first stat of one of them that no kept page answers fetches that
 * range's attributes in one round trip ("stat-ahead") instead of one round
 * trip per entry, within SFS_PL_LISTED_AHEAD_MS of the plain page: it is
 * for stats that follow a listing (find, du), not for a stat that comes
 * long after one (a program's stat phase after it checked a listing).
 *
 * A kept page answers a stat only while it is what a round trip would
 * answer, as far as this process can tell (docs/posix-preload.md,
 * "Listings with attributes"):
 *  - nothing but stats, listings and directory opens and closes was
 *    called in the client library since the page was asked for
 *    (sfs_pl_call_count unchanged: any change this process made ends it);
 *  - for at most SFS_PL_LISTED_MS after it was asked for;
 *  - never for a size only the targets know (a file open for writing).
 * SFS_PL_LISTED_SLOTS pages and ranges are kept, the oldest replaced: at
 * most 64 x 256 x (272 + 80) bytes, 5.5 MiB.
 */
#include "sfs_preload.h"

#include "sfs_time.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define SFS_PL_LISTED_SLOTS    64   /* pages kept: 16,384 entries with attributes */
#define SFS_PL_LISTED_MS       200  /* how long a page's attributes are taken */
#define SFS_PL_LISTED_AHEAD_MS 1000 /* how long a plain page's range is fetched for stats */
#define SFS_PL_NAME_SIZE       sizeof(((sfs_dir_entry_t *)0)->name)

/* What a stat through the preload reads of an sfs_stat_t: kept instead of
 * it (80 bytes, not 728: no targets; none is read from a kept page). */
typedef struct {
    uint64_t entry_id, size, nlink, atime_ns, mtime_ns, ctime_ns, chunk_size;
    uint32_t type, mode, uid, gid, stripe_count, flags;
} sfs_pl_listed_attr_t;

typedef struct {
    uint64_t              ticket; /* 0: empty */
    char                  path[SFS_PL_PATH_MAX];
    char                  after[SFS_PL_NAME_SIZE]; /* the page's names come after it */
    char                  last[SFS_PL_NAME_SIZE];  /* ... up to this one */
    int                   eof;                     /* the page ends the directory */
    uint32_t              count;
    sfs_dir_entry_t      *entries; /* with attributes: owned; NULL for a plain page */
    sfs_pl_listed_attr_t *attrs;
    uint64_t              asked_ms, calls; /* when it was asked for */
    uint32_t              hits;            /* stats it answered */
    int                   wanted;          /* plain: a stat fetched its attributes */
} sfs_pl_listed_t;

static pthread_mutex_t sfs_pl_listed_lock = PTHREAD_MUTEX_INITIALIZER;
static sfs_pl_listed_t sfs_pl_listed[SFS_PL_LISTED_SLOTS];
static unsigned        sfs_pl_listed_next; /* the slot to fill next */
static uint64_t        sfs_pl_listed_tickets;
static int             sfs_pl_listed_used; /* a page was kept: look */
/* the last directory whose listing with attributes was refused: not asked
 * again (a directory one may read but not search; an older server) */
static char sfs_pl_listed_refused_path[SFS_PL_PATH_MAX];

/* The slot of ticket, or NULL (lock held). */
static sfs_pl_listed_t *sfs_pl_listed_find(uint64_t ticket)
{
    sfs_pl_listed_t *slot = &sfs_pl_listed[(ticket - 1) % SFS_PL_LISTED_SLOTS];

    return ticket && slot->ticket == ticket ? slot : NULL;
}

/* Fill the next slot, replacing the oldest (lock held): its ticket. */
static uint64_t sfs_pl_listed_put(const char *dir_path, const char *after, const char *last,
                                  int eof, uint32_t count, sfs_dir_entry_t *entries,
                                  sfs_pl_listed_attr_t *attrs, uint64_t asked_ms, uint64_t calls)
{
    sfs_pl_listed_t *slot = &sfs_pl_listed[sfs_pl_listed_next];

    free(slot->entries);
    free(slot->attrs);
    memset(slot, 0, sizeof(*slot));
    /* slots are filled in turn, one ticket each: ticket t is in slot
     * (t - 1) % SFS_PL_LISTED_SLOTS (sfs_pl_listed_find) */
    slot->ticket       = ++sfs_pl_listed_tickets;
    sfs_pl_listed_next = (sfs_pl_listed_next + 1) % SFS_PL_LISTED_SLOTS;
    snprintf(slot->path, sizeof(slot->path), "%s", dir_path);
    snprintf(slot->after, sizeof(slot->after), "%s", after ? after : "");
    snprintf(slot->last, sizeof(slot->last), "%s", last);
    slot->eof      = eof;
    slot->count    = count;
    slot->entries  = entries;
    slot->attrs    = attrs;
    slot->asked_ms = asked_ms;
    slot->calls    = calls;
    __atomic_store_n(&sfs_pl_listed_used, 1, __ATOMIC_RELEASE);
    return slot->ticket;
}

uint64_t sfs_pl_listed_keep(const char *dir_path, const char *after, int eof,
                            sfs_dir_entry_t *entries, sfs_stat_t *stats, uint32_t count,
                            uint64_t asked_ms, uint64_t calls)
{
    sfs_pl_listed_attr_t *attrs = count ? malloc(count * sizeof(*attrs)) : NULL;
    uint64_t              ticket;

    if (!attrs) {
        free(entries);
        free(stats);
        return 0;
    }
    for (uint32_t i = 0; i < count; i++) {
        const sfs_stat_t *in = &stats[i];

        attrs[i] = (sfs_pl_listed_attr_t){.entry_id     = in->entry_id,
                                          .size         = in->size,
                                          .nlink        = in->nlink,
                                          .atime_ns     = in->atime_ns,
                                          .mtime_ns     = in->mtime_ns,
                                          .ctime_ns     = in->ctime_ns,
                                          .chunk_size   = in->chunk_size,
                                          .type         = in->type,
                                          .mode         = in->mode,
                                          .uid          = in->uid,
                                          .gid          = in->gid,
                                          .stripe_count = in->stripe_count,
                                          .flags        = in->flags};
    }
    free(stats);
    pthread_mutex_lock(&sfs_pl_listed_lock);
    ticket = sfs_pl_listed_put(dir_path, after, entries[count - 1].name, eof, count, entries, attrs,
                               asked_ms, calls);
    pthread_mutex_unlock(&sfs_pl_listed_lock);
    return ticket;
}

uint64_t sfs_pl_listed_plain(const char *dir_path, const char *after, int eof,
                             const sfs_dir_entry_t *entries, uint32_t count)
{
    uint64_t ticket;

    if (count == 0) {
        return 0;
    }
    pthread_mutex_lock(&sfs_pl_listed_lock);
    ticket = sfs_pl_listed_put(dir_path, after, entries[count - 1].name, eof, count, NULL, NULL,
                               sfs_time_ms(), 0);
    pthread_mutex_unlock(&sfs_pl_listed_lock);
    return ticket;
}

void sfs_pl_listed_refuse(const char *dir_path)
{
    pthread_mutex_lock(&sfs_pl_listed_lock);
    snprintf(sfs_pl_listed_refused_path, sizeof(sfs_pl_listed_refused_path), "%s", dir_path);
    pthread_mutex_unlock(&sfs_pl_listed_lock);
}

int sfs_pl_listed_refused(const char *dir_path)
{
    int refused;

    pthread_mutex_lock(&sfs_pl_listed_lock);
    refused = strcmp(sfs_pl_listed_refused_path, dir_path) == 0;
    pthread_mutex_unlock(&sfs_pl_listed_lock);
    return refused;
}

int sfs_pl_listed_used_by_stats(uint64_t ticket)
{
    sfs_pl_listed_t *slot;
    int              used;

    pthread_mutex_lock(&sfs_pl_listed_lock);
    slot = sfs_pl_listed_find(ticket);
    used = slot && (slot->entries ? slot->hits > 0 : slot->wanted);
    pthread_mutex_unlock(&sfs_pl_listed_lock);
    return used;
}

/* The index of `name` in a page with attributes (strcmp order), or -1. */
static int sfs_pl_listed_index(const sfs_pl_listed_t *slot, const char *name)
{
    int low = 0, high = (int)slot->count - 1;

    while (low <= high) {
        int middle = low + (high - low) / 2;
        int order  = strcmp(name, slot->entries[middle].name);

        if (order == 0) {
            return middle;
        }
        if (order < 0) {
            high = middle - 1;
        } else {
            low = middle + 1;
        }
    }
    return -1;
}

/* Whether `name` of directory `parent` (parent_length bytes) falls in the
 * slot's range of names. */
static int sfs_pl_listed_covers(const sfs_pl_listed_t *slot, const char *parent,
                                size_t parent_length, const char *name)
{
    return slot->ticket && strlen(slot->path) == parent_length &&
           memcmp(slot->path, parent, parent_length) == 0 && strcmp(name, slot->after) > 0 &&
           (slot->eof || strcmp(name, slot->last) <= 0);
}

/* Split sfs_path into its parent (length) and name; 0 for "/" or "x/". */
static int sfs_pl_listed_split(const char *sfs_path, size_t *parent_length, const char **name)
{
    const char *slash = strrchr(sfs_path, '/');

    if (!slash || !slash[1]) {
        return 0;
    }
    *parent_length = slash == sfs_path ? 1 : (size_t)(slash - sfs_path);
    *name          = slash + 1;
    return 1;
}

static void sfs_pl_listed_unpack(const sfs_pl_listed_attr_t *in, sfs_stat_t *s)
{
    memset(s, 0, sizeof(*s));
    s->entry_id     = in->entry_id;
    s->size         = in->size;
    s->nlink        = in->nlink;
    s->atime_ns     = in->atime_ns;
    s->mtime_ns     = in->mtime_ns;
    s->ctime_ns     = in->ctime_ns;
    s->chunk_size   = in->chunk_size;
    s->type         = in->type;
    s->mode         = in->mode;
    s->uid          = in->uid;
    s->gid          = in->gid;
    s->stripe_count = in->stripe_count;
    /* (a lookup's size is not asked for) */
    s->flags = in->flags & ~(uint32_t)SFS_STAT_SIZE_UNKNOWN;
}

int sfs_pl_listed_stat(const char *sfs_path, int need_size, sfs_stat_t *s)
{
    const char *name;
    size_t      parent_length;
    uint64_t    calls, now_ms;
    int         found = 0;

    if (!__atomic_load_n(&sfs_pl_listed_used, __ATOMIC_ACQUIRE) ||
        !sfs_pl_listed_split(sfs_path, &parent_length, &name)) {
        return 0;
    }
    calls  = sfs_pl_call_count();
    now_ms = sfs_time_ms();
    pthread_mutex_lock(&sfs_pl_listed_lock);
    /* the newest first: a page fetched again answers with its latest */
    for (unsigned i = 1; i <= SFS_PL_LISTED_SLOTS && !found; i++) {
        sfs_pl_listed_t *slot =
            &sfs_pl_listed[(sfs_pl_listed_next + SFS_PL_LISTED_SLOTS - i) % SFS_PL_LISTED_SLOTS];
        int index;

        if (!slot->entries || slot->calls != calls || now_ms - slot->asked_ms > SFS_PL_LISTED_MS ||
            !sfs_pl_listed_covers(slot, sfs_path, parent_length, name)) {
            continue;
        }
        index = sfs_pl_listed_index(slot, name);
        if (index < 0) {
            break; /* the newest listing of that range has no such name */
        }
        if (need_size && (slot->attrs[index].flags & SFS_STAT_SIZE_UNKNOWN)) {
            break; /* only the targets know: asked */
        }
        sfs_pl_listed_unpack(&slot->attrs[index], s);
        slot->hits++;
        found = 1;
    }
    pthread_mutex_unlock(&sfs_pl_listed_lock);
    return found;
}

/* The plain page listed within SFS_PL_LISTED_AHEAD_MS whose range holds
 * sfs_path's name: its ticket, directory and resume point (0: none, or its
 * attributes were refused once). Marks it wanted. */
static uint64_t sfs_pl_listed_plain_for(const char *sfs_path, char *dir_path, char *after)
{
    const char *name;
    size_t      parent_length;
    uint64_t    ticket = 0, now_ms = sfs_time_ms();

    if (!sfs_pl_listed_split(sfs_path, &parent_length, &name)) {
        return 0;
    }
    pthread_mutex_lock(&sfs_pl_listed_lock);
    for (unsigned i = 1; i <= SFS_PL_LISTED_SLOTS; i++) {
        sfs_pl_listed_t *slot =
            &sfs_pl_listed[(sfs_pl_listed_next + SFS_PL_LISTED_SLOTS - i) % SFS_PL_LISTED_SLOTS];

        if (!sfs_pl_listed_covers(slot, sfs_path, parent_length, name)) {
            continue;
        }
        if (!slot->entries && !slot->wanted && now_ms - slot->asked_ms <= SFS_PL_LISTED_AHEAD_MS &&
            strcmp(slot->path, sfs_pl_listed_refused_path) != 0) {
            slot->wanted = 1; /* (fetched once: a miss after that is a round trip) */
            ticket       = slot->ticket;
            snprintf(dir_path, SFS_PL_PATH_MAX, "%s", slot->path);
            snprintf(after, SFS_PL_NAME_SIZE, "%s", slot->after);
        }
        break; /* the newest listing of that range decides */
    }
    pthread_mutex_unlock(&sfs_pl_listed_lock);
    return ticket;
}

int sfs_pl_listed_ahead(const char *sfs_path, int need_size, sfs_stat_t *s)
{
    char             dir_path[SFS_PL_PATH_MAX], after[SFS_PL_NAME_SIZE];
    uint64_t         asked_ms = 0, calls = 0;
    sfs_dir_entry_t *entries;
    sfs_stat_t      *stats;
    sfs_client_t    *client;
    uint32_t         count = 0;
    int              eof   = 0, rc;

    if (!sfs_pl_list_attrs() || !__atomic_load_n(&sfs_pl_listed_used, __ATOMIC_ACQUIRE)) {
        return 0;
    }
    if (!sfs_pl_listed_plain_for(sfs_path, dir_path, after)) {
        return 0;
    }
    entries = malloc(SFS_PL_LISTED_PAGE * sizeof(*entries));
    stats   = malloc(SFS_PL_LISTED_PAGE * sizeof(*stats));
    rc      = entries && stats ? sfs_pl_enter_to_read(&client) : -ENOMEM;
    if (rc == 0) {
        asked_ms = sfs_time_ms();
        calls    = sfs_pl_call_count();
        rc       = sfs_readdir_attrs(client, dir_path, after[0] ? after : NULL, entries, stats,
                                     SFS_PL_LISTED_PAGE, &count, &eof);
        sfs_pl_unlock();
    }
    if (rc) {
        free(entries);
        free(stats);
        if (rc == -EACCES || rc == -EOPNOTSUPP) {
            /* may read, not search (its stats fail, as on ext4), or an
             * older server */
            sfs_pl_listed_refuse(dir_path);
        }
        return 0; /* the caller's own round trip says what is wrong */
    }
    sfs_pl_listed_keep(dir_path, after, eof, entries, stats, count, asked_ms, calls);
    return sfs_pl_listed_stat(sfs_path, need_size, s);
}
