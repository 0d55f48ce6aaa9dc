/* The buddy's word's arithmetic (sfs_buddy_word.h). */
#include "sfs_buddy_word.h"

void sfs_buddy_word_init(sfs_buddy_word_t *word, uint64_t offline_timeout_ms,
                         uint64_t given_until_ms)
{
    sfs_lease_init(&word->held, offline_timeout_ms);
    word->dropped_ms     = 0;
    word->given_until_ms = given_until_ms;
    word->told           = 0;
    word->refused        = 0;
}

void sfs_buddy_word_renew(sfs_buddy_word_t *word, uint64_t sent_ms)
{
    if (sent_ms < word->dropped_ms) {
        return; /* a forward from before the buddy was lost: it may have restarted since */
    }
    sfs_lease_renew(&word->held, sent_ms);
}

void sfs_buddy_word_drop(sfs_buddy_word_t *word, uint64_t now_ms, int refused)
{
    word->held.held = 0;
    word->refused |= refused;
    if (now_ms > word->dropped_ms) {
        word->dropped_ms = now_ms;
    }
}

void sfs_buddy_word_forgive(sfs_buddy_word_t *word)
{
    word->refused = 0;
    word->told    = 0;
}

int sfs_buddy_word_holds(const sfs_buddy_word_t *word, uint64_t now_ms)
{
    return sfs_lease_valid(&word->held, now_ms);
}

void sfs_buddy_word_give(sfs_buddy_word_t *word, uint64_t now_ms)
{
    uint64_t until = now_ms + word->held.length_ms;

    if (until > word->given_until_ms) {
        word->given_until_ms = until;
    }
}

uint64_t sfs_buddy_word_wait_ms(const sfs_buddy_word_t *word, uint64_t now_ms)
{
    return word->given_until_ms > now_ms ? word->given_until_ms - now_ms : 0;
}
