/*
 * Replay protection for one session: which request ids it has already
 * accepted. Every request is MAC-sealed with the session key, but a captured
 * request stays valid for the session's life; this window lets each request
 * id be served once.
 *
 * A sender takes its request ids from one counter (sfs_tp_worker_t), so the
 * ids one session sees rise, with gaps for the sender's other connections.
 * Requests may be dispatched out of order (a rendezvous payload finishes
 * after later small requests), so the window remembers the last
 * SFS_TP_REPLAY_WINDOW ids below the highest one accepted, as a ring of bits
 * (RFC 4303 section 3.4.3, RFC 6479). An id older than the window is refused:
 * it cannot be told from a replay.
 *
 * Only ids whose request passed its MAC check may be given to it, or a
 * forged id could move the window and make honest requests look old.
 */
#ifndef SFS_TP_REPLAY_H
#define SFS_TP_REPLAY_H

#include <stdint.h>

#define SFS_TP_REPLAY_WINDOW 8192 /* ids; a multiple of 64 */

typedef struct sfs_tp_replay {
    uint64_t highest; /* highest id accepted; 0: none yet */
    uint64_t seen[SFS_TP_REPLAY_WINDOW / 64];
} sfs_tp_replay_t;

typedef enum {
    SFS_TP_REPLAY_FRESH = 0, /* first time: now marked as seen */
    SFS_TP_REPLAY_SEEN,      /* accepted before: a replay */
    SFS_TP_REPLAY_TOO_OLD,   /* below the window (or id 0): refused */
} sfs_tp_replay_verdict_t;

/* An empty window (also what zeroed memory is). */
void sfs_tp_replay_init(sfs_tp_replay_t *window);

/* Check `request_id` and, if fresh, mark it. */
sfs_tp_replay_verdict_t sfs_tp_replay_check(sfs_tp_replay_t *window, uint64_t request_id);

#endif
