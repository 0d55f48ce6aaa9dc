/*
 * The buddy's word (docs/mirroring.md, "Fencing: the buddy's word"): a
 * storage primary whose lease from management ran out (management down,
 * or cut off from this rank only) may go on acknowledging a mirrored
 * change that its buddy took as the group's secondary, and serving
 * reads, for a lease length L counted from when it SENT the forward that
 * the buddy took. The buddy, once promoted, serves as primary only after
 * L counted from when it last TOOK such a copy (on its own clock): by
 * then the old primary's word has run out (the copy arrived no earlier
 * than it was sent), so no two members ever act as primary at once, and
 * every change the old primary acknowledged is on the promoted copy (it
 * took it). A promoted buddy refuses copies from its old primary, so the
 * word is never renewed past a promotion it knows of. Without management
 * nothing is promoted, so a pair whose members reach each other goes on
 * while management is away.
 *
 * One record per group member of a storage rank: `held` as a primary
 * (the buddy's word), `given_until_ms` as a secondary (how long the word
 * it gave may hold). Pure arithmetic, no I/O: unit-tested in
 * tests/unit/service/test_buddy_word.c.
 */
#ifndef SFS_BUDDY_WORD_H
#define SFS_BUDDY_WORD_H

#include "sfs_lease.h"

#include <stdint.h>

typedef struct sfs_buddy_word {
    sfs_lease_t held;
    uint64_t    dropped_ms;     /* forwards sent before this do not renew it */
    uint64_t    given_until_ms; /* as secondary: its own word's end */
    int         told;           /* "goes on on its buddy's word" logged (until forgiven) */
    int         refused;        /* the buddy refused a copy: it is the primary now */
} sfs_buddy_word_t;

/* No word held; `given_until_ms` as a restarted member must assume
 * (its buddy may hold a word given before the restart), or 0. */
void sfs_buddy_word_init(sfs_buddy_word_t *word, uint64_t offline_timeout_ms,
                         uint64_t given_until_ms);
/* A forward sent at `sent_ms` was taken by the buddy as its secondary. */
void sfs_buddy_word_renew(sfs_buddy_word_t *word, uint64_t sent_ms);
/* A forward failed at `now_ms` (unreachable, or `refused`: the buddy is
 * the primary now): the word counts no more, nor does any forward sent
 * before now (a restarted buddy forgot). A refusal stands until
 * sfs_buddy_word_forgive (management's lease back, with its map), which
 * also begins a new lapse for the log. */
void sfs_buddy_word_drop(sfs_buddy_word_t *word, uint64_t now_ms, int refused);
void sfs_buddy_word_forgive(sfs_buddy_word_t *word);
/* Non-zero while the buddy's word holds at `now_ms`. */
int sfs_buddy_word_holds(const sfs_buddy_word_t *word, uint64_t now_ms);
/* As secondary, a copy from the buddy was taken at `now_ms`. */
void sfs_buddy_word_give(sfs_buddy_word_t *word, uint64_t now_ms);
/* As primary: how long it must still wait for the word it gave (0: none). */
uint64_t sfs_buddy_word_wait_ms(const sfs_buddy_word_t *word, uint64_t now_ms);

#endif
