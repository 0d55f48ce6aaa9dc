/*
 * A munged of the service's own, for a service on one host (tests, trying
 * stripefs out): the config's security.munged_key names its key, and it
 * listens on security.munge_socket. A site with MUNGE already running (as
 * on the Imaging hosts) leaves munged_key out and uses that one.
 */
#ifndef SFS_MUNGED_H
#define SFS_MUNGED_H

#include "sfs_config.h"

#include <sys/types.h>

/* Make the key (1024 random bytes, mode 0400) if it does not exist yet. */
int sfs_munged_make_key(const char *key_path);

/* Start munged unless one already answers on the socket; *pid_p is its pid
 * (0 when an existing one is used). Waits until it answers. */
int sfs_munged_start(const sfs_config_t *config, pid_t *pid_p);

/* Take over the munged a lost rank of this service started (it lives on
 * when its starter is killed): *pid_p is its pid, from munged.pid beside
 * the socket, if it runs and answers, else 0 (nothing to stop later). */
void sfs_munged_adopt(const sfs_config_t *config, pid_t *pid_p);

/* Stop the munged sfs_munged_start started or sfs_munged_adopt took over
 * (pid 0: nothing to do). */
void sfs_munged_stop(pid_t pid);

#endif
