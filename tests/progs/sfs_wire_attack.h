/*
 * What the files of sfs_wire_attack share: the worker and the server's
 * address, the count of failed checks, and handshakes by hand.
 *   sfs_wire_attack.c           sessions, messages, handoff, direct copies
 *   sfs_wire_attack_versions.c  peers of older and newer versions
 */
#ifndef SFS_WIRE_ATTACK_H
#define SFS_WIRE_ATTACK_H

#include "sfs_tp_internal.h"

#include <stdio.h>

extern int              failures;
extern sfs_tp_worker_t *worker;
extern void            *address;
extern size_t           address_length;
extern uint64_t         hand_features; /* what a HELLO by hand announces */

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        printf("%s: ", (cond) ? "ok" : "FAILED");                                                  \
        printf(__VA_ARGS__);                                                                       \
        printf("\n");                                                                              \
        fflush(stdout);                                                                            \
        failures += !(cond);                                                                       \
    } while (0)

/* An honest round trip on a fresh connection: the server still serves. */
int honest_ping(void);
/* A HELLO by hand (announcing hand_features): 0 or the refusal. */
int  hello_by_hand(sfs_tp_conn_t **conn_p, sfs_hello_req_t *hello, sfs_hello_reply_t *reply);
void attack_old_peer(void);
void attack_self_connect(void);

#endif
