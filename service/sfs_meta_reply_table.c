/* A metadata mirror's kept replies, in memory (sfs_meta_reply_table.h). */
#include "sfs_meta_reply_table.h"

#include "sfs_alloc.h"
#include "sfs_errno.h"
#include "sfs_hash.h"
#include "sfs_list.h"
#include "sfs_meta_writes.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct sfs_meta_reply_entry {
    sfs_hash_link_t link; /* key: sfs_meta_reply_hash */
    sfs_list_t      age;  /* the table's entries, oldest first */
    uint64_t        client;
    uint64_t        op_tag;
    uint64_t        kept_ns;
    size_t          length;
    uint8_t         value[]; /* the record as sent (checked when kept) */
} sfs_meta_reply_entry_t;

struct sfs_meta_reply_table {
    pthread_mutex_t lock;
    sfs_hash_t      entries;
    sfs_list_t      by_age;
};

/* One u64 for the hash; two pairs that share one are told apart by the
 * entry's own numbers (the later put replaces the earlier). */
static uint64_t sfs_meta_reply_hash(uint64_t client, uint64_t op_tag)
{
    return client ^ (op_tag * 0x9e3779b97f4a7c15ull);
}

int sfs_meta_reply_table_create(sfs_meta_reply_table_t **table_p)
{
    sfs_meta_reply_table_t *table;

    if (!SFS_ALLOC_PTR(table)) {
        return -ENOMEM;
    }
    if (sfs_hash_init(&table->entries) != 0) {
        free(table);
        return -ENOMEM;
    }
    pthread_mutex_init(&table->lock, NULL);
    sfs_list_init(&table->by_age);
    *table_p = table;
    return 0;
}

static void sfs_meta_reply_forget(sfs_meta_reply_table_t *table, sfs_meta_reply_entry_t *entry)
{
    sfs_hash_del(&table->entries, &entry->link);
    sfs_list_del(&entry->age);
    free(entry);
}

void sfs_meta_reply_table_destroy(sfs_meta_reply_table_t *table)
{
    sfs_list_t *elem;

    if (!table) {
        return;
    }
    while ((elem = sfs_list_pop_head(&table->by_age)) != NULL) {
        free(sfs_container_of(elem, sfs_meta_reply_entry_t, age));
    }
    sfs_hash_cleanup(&table->entries);
    pthread_mutex_destroy(&table->lock);
    free(table);
}

static sfs_meta_reply_entry_t *sfs_meta_reply_find(sfs_meta_reply_table_t *table, uint64_t client,
                                                   uint64_t op_tag)
{
    sfs_hash_link_t *link = sfs_hash_find(&table->entries, sfs_meta_reply_hash(client, op_tag));

    return link ? sfs_container_of(link, sfs_meta_reply_entry_t, link) : NULL;
}

/* Keep one (lock held); the bounds of the header. */
static int sfs_meta_reply_keep(sfs_meta_reply_table_t *table, uint64_t client, uint64_t op_tag,
                               const void *value, size_t length, uint64_t now_ns)
{
    uint64_t                max_age = (uint64_t)SFS_META_REPLY_MAX_AGE_S * 1000000000ull;
    sfs_meta_reply_entry_t *entry   = sfs_meta_reply_find(table, client, op_tag);
    sfs_list_t             *oldest;

    if (entry) {
        sfs_meta_reply_forget(table, entry); /* the same pair again, or one sharing its hash */
    }
    if (op_tag > SFS_META_REPLY_KEEP &&
        (entry = sfs_meta_reply_find(table, client, op_tag - SFS_META_REPLY_KEEP)) != NULL &&
        entry->client == client && entry->op_tag == op_tag - SFS_META_REPLY_KEEP) {
        sfs_meta_reply_forget(table, entry);
    }
    while ((oldest = table->by_age.next) != &table->by_age) {
        entry = sfs_container_of(oldest, sfs_meta_reply_entry_t, age);
        if (table->entries.count < SFS_META_REPLY_TABLE_MAX && entry->kept_ns + max_age > now_ns) {
            break;
        }
        sfs_meta_reply_forget(table, entry);
    }
    entry = calloc(1, sizeof(*entry) + length);
    if (!entry) {
        return -ENOMEM;
    }
    entry->client  = client;
    entry->op_tag  = op_tag;
    entry->kept_ns = now_ns;
    entry->length  = length;
    memcpy(entry->value, value, length);
    sfs_list_add_tail(&table->by_age, &entry->age);
    sfs_hash_add(&table->entries, &entry->link, sfs_meta_reply_hash(client, op_tag));
    return 0;
}

typedef struct sfs_meta_reply_apply {
    sfs_meta_reply_table_t *table;
    uint64_t                now_ns;
    uint32_t                skipped;
} sfs_meta_reply_apply_t;

static int sfs_meta_reply_apply_one(void *arg, sfs_meta_write_op_t op, sfs_meta_table_t table,
                                    const void *key, size_t key_length, const void *value,
                                    size_t value_length)
{
    sfs_meta_reply_apply_t *apply = arg;
    sfs_meta_reply_record_t record;
    uint64_t                client, op_tag;

    if (table != SFS_META_TABLE_REPLIES) {
        return 0;
    }
    if (op != SFS_META_WRITE_PUT ||
        sfs_meta_reply_key_parse(key, key_length, &client, &op_tag) != 0 ||
        sfs_meta_reply_record_decode(value, value_length, &record) != 0 ||
        sfs_meta_reply_keep(apply->table, client, op_tag, value, value_length, apply->now_ns) !=
            0) {
        apply->skipped++;
    }
    return 0;
}

uint32_t sfs_meta_reply_table_apply(sfs_meta_reply_table_t *table, const void *data, size_t length,
                                    uint64_t now_ns)
{
    sfs_meta_reply_apply_t apply = {table, now_ns, 0};

    pthread_mutex_lock(&table->lock);
    if (sfs_meta_writes_parse(data, length, sfs_meta_reply_apply_one, &apply) != 0) {
        apply.skipped++; /* a store refused it before: not reached */
    }
    pthread_mutex_unlock(&table->lock);
    return apply.skipped;
}

int sfs_meta_reply_table_put(sfs_meta_reply_table_t *table, uint64_t client, uint64_t op_tag,
                             const sfs_meta_reply_record_t *record, uint64_t now_ns)
{
    uint8_t                 value[SFS_META_REPLY_RECORD_MAX];
    size_t                  length = sfs_meta_reply_record_encode(record, value, sizeof(value));
    sfs_meta_reply_record_t check;
    int                     rc;

    /* kept only as a note would be: one that reads back */
    if (!length || sfs_meta_reply_record_decode(value, length, &check) != 0) {
        return -EINVAL;
    }
    pthread_mutex_lock(&table->lock);
    rc = sfs_meta_reply_keep(table, client, op_tag, value, length, now_ns);
    pthread_mutex_unlock(&table->lock);
    return rc;
}

int sfs_meta_reply_table_get(sfs_meta_reply_table_t *table, uint64_t client, uint64_t op_tag,
                             sfs_meta_reply_record_t *record)
{
    sfs_meta_reply_entry_t *entry;
    int                     rc = -ENOENT;

    pthread_mutex_lock(&table->lock);
    entry = sfs_meta_reply_find(table, client, op_tag);
    if (entry && entry->client == client && entry->op_tag == op_tag) {
        rc = sfs_meta_reply_record_decode(entry->value, entry->length, record);
    }
    pthread_mutex_unlock(&table->lock);
    return rc;
}

size_t sfs_meta_reply_table_count(sfs_meta_reply_table_t *table)
{
    size_t count;

    pthread_mutex_lock(&table->lock);
    count = table->entries.count;
    pthread_mutex_unlock(&table->lock);
    return count;
}
