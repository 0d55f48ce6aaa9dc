/*
 * sfs_dirlock: one server process per directory of the service's state.
 *
 * Promise: sfs_dirlock_acquire() gives this process an exclusive claim on
 * DIR (a state dir, a metadata store, a storage target) for as long as it
 * holds the lock, and refuses a second claimant, in this process or any
 * other, with -EBUSY and a message naming the holder (pid, host, what it
 * holds, since when). The claim is flock(2) on DIR/.stripefs.lock, so the
 * kernel drops it when the holder exits or is killed: a lost rank's
 * directories can be taken over at once by its --rejoin, never while it
 * lives. The lock file is never removed (removing it would let two
 * processes lock two different files). A file system without flock gives
 * an error naming it, not a silent pass.
 */
#ifndef SFS_DIRLOCK_H
#define SFS_DIRLOCK_H

typedef struct sfs_dirlock sfs_dirlock_t;

#define SFS_DIRLOCK_FILE ".stripefs.lock"

/* Claim `dir` (which must exist) as `what` ("metadata store", "storage
 * target 101", "state dir"). 0 and *lock_p, or a negative errno with
 * sfs_error_set(): -EBUSY when another process (or another claim in this
 * one) holds it. */
int sfs_dirlock_acquire(const char *dir, const char *what, sfs_dirlock_t **lock_p);

/* Give the claim up (NULL is fine). */
void sfs_dirlock_release(sfs_dirlock_t *lock);

#endif /* SFS_DIRLOCK_H */
