/* Shared by the parts of sfs_munge_attack (see sfs_munge_attack.c): the
 * state of the run, the check macro, honest sessions, and the attacks each
 * part makes. */
#ifndef SFS_MUNGE_ATTACK_H
#define SFS_MUNGE_ATTACK_H

#define SFS_LOG_FAC "attack"
#include "sfs_tp_internal.h"

#include "sfs_auth.h"
#include "sfs_errno.h"
#include "sfs_log.h"
#include "sfs_map.h"

#include <grp.h>
#include <inttypes.h>
#include <munge.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define ATTACK_FILE   "/sfs_munge_attack.dat"
#define OTHER_FILE    "/sfs_munge_attack.other"
#define ATTACK_LENGTH 4096

extern int              failures;
extern const char      *munge_socket;
extern sfs_tp_worker_t *worker;   /* honest sessions, and the victim of 7 */
extern sfs_tp_worker_t *attacker; /* another process's worker, for 7 */
extern void            *mgmt_address;
extern size_t           mgmt_address_length;
extern sfs_map_t       *map;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        printf("%s: ", (cond) ? "ok" : "FAILED");                                                  \
        printf(__VA_ARGS__);                                                                       \
        printf("\n");                                                                              \
        fflush(stdout);                                                                            \
        failures += !(cond);                                                                       \
    } while (0)

typedef struct {
    sfs_tp_conn_t    *conn;
    sfs_hello_req_t   hello;
    sfs_hello_reply_t reply;
    sfs_auth_kx_t     kx;
} hand_t;

extern hand_t victim;                          /* an honest session by hand, kept for 7 */
extern char   chunk_detail[SFS_TP_DETAIL_MAX]; /* the last chunk call's detail */
extern char   auth_detail[SFS_TP_DETAIL_MAX];  /* the last AUTH by hand or call_on detail */

int   make_worker(const char *name, sfs_tp_worker_t **worker_p);
int   honest_conn(sfs_tp_worker_t *w, const sfs_map_node_t *node, sfs_tp_conn_t **conn_p);
int   conn_answers(sfs_tp_conn_t *conn);
int   honest_ping(void);
void  settle(sfs_tp_worker_t *w, int ms);
void  hand_err_cb(void *arg, ucp_ep_h ep, ucs_status_t status);
int   hello_by_hand(uint32_t peer_kind, hand_t *h);
char *munge_cred(const char *socket, const void *payload, size_t length, int ttl);
char *client_cred(const hand_t *h, const char *socket, int ttl);
int   auth_by_hand(hand_t *h, const char *cred);
void  hand_close(hand_t *h);
void  expect_refused(hand_t *h, int hello_rc, const char *cred, const char *what);
void  attack_credentials(const char *other_socket);
int   call_on(sfs_tp_conn_t *conn, uint32_t opcode, const void *args, size_t args_length,
              char *detail, size_t detail_size);
void  attack_server_claim(void);
int   meta_open(sfs_tp_conn_t *meta, uint32_t opcode, const char *path, uint32_t flags,
                sfs_attr_t *attr, sfs_cap_t *cap);
int   chunk_call(sfs_tp_conn_t *conn, uint32_t opcode, uint32_t target_id, uint64_t entry_id,
                 const sfs_cap_t *cap, void *in, const void *out);
const sfs_map_node_t *node_of_target(uint32_t target_id);
int  read_as_nobody(char **argv, uint32_t target, uint64_t entry_id, const sfs_cap_t *cap);
void attack_capabilities(char **argv);

#endif
