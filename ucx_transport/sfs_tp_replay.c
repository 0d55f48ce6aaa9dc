/* The replay window of sfs_tp_replay.h. */
#include "sfs_tp_replay.h"

#include <string.h>

#define SFS_TP_REPLAY_WORDS (SFS_TP_REPLAY_WINDOW / 64)

void sfs_tp_replay_init(sfs_tp_replay_t *window)
{
    memset(window, 0, sizeof(*window));
}

static uint64_t *sfs_tp_replay_word(sfs_tp_replay_t *window, uint64_t id, uint64_t *mask_p)
{
    uint64_t slot = id % SFS_TP_REPLAY_WINDOW;

    *mask_p = 1ull << (slot % 64);
    return &window->seen[slot / 64];
}

sfs_tp_replay_verdict_t sfs_tp_replay_check(sfs_tp_replay_t *window, uint64_t request_id)
{
    uint64_t  mask;
    uint64_t *word;

    if (request_id == 0) {
        return SFS_TP_REPLAY_TOO_OLD;
    }
    if (request_id > window->highest) {
        uint64_t advance = request_id - window->highest;

        /* the slots of the ids the window moves over are reused: clear them */
        if (advance >= SFS_TP_REPLAY_WINDOW) {
            memset(window->seen, 0, sizeof(window->seen));
        } else {
            for (uint64_t id = window->highest + 1; id < request_id; id++) {
                word = sfs_tp_replay_word(window, id, &mask);
                *word &= ~mask;
            }
        }
        window->highest = request_id;
        word            = sfs_tp_replay_word(window, request_id, &mask);
        *word |= mask;
        return SFS_TP_REPLAY_FRESH;
    }
    if (window->highest - request_id >= SFS_TP_REPLAY_WINDOW) {
        return SFS_TP_REPLAY_TOO_OLD;
    }
    word = sfs_tp_replay_word(window, request_id, &mask);
    if (*word & mask) {
        return SFS_TP_REPLAY_SEEN;
    }
    *word |= mask;
    return SFS_TP_REPLAY_FRESH;
}
