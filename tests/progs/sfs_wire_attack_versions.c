/*
 * Peers of other versions (docs/protocol.md): one whose HELLO has no
 * features, as before they existed, is refused with a reply that says what
 * it lacks; one with a bit the server does not know is served.
 * A connection that comes back to its own process (TCP connects a socket to
 * itself when the port it picks is a dead peer's) is refused as a
 * connection, not taken for a server: here, a connection to this process's
 * own worker address.
 */
#define SFS_LOG_FAC "attack"
#include "sfs_wire_attack.h"

#include "sfs_errno.h"

#include <string.h>

void attack_self_connect(void)
{
    size_t         own_length;
    const void    *own = sfs_tp_worker_address(worker, &own_length);
    sfs_tp_conn_t *conn;
    int            rc;

    rc = sfs_tp_conn_create(worker, own, own_length, "this process", 5000, &conn);
    if (rc == 0) {
        sfs_tp_conn_destroy(conn);
    }
    CHECK(rc == -ECONNREFUSED && strstr(sfs_error_detail(), "came back to this process"),
          "a connection to this process itself is refused as a connection: %s (%s)",
          sfs_strerror(rc), sfs_error_detail());
    CHECK(honest_ping() == 0, "the server is still reached after a connection to itself");
}

void attack_old_peer(void)
{
    sfs_hello_req_t   hello;
    sfs_hello_reply_t reply;
    sfs_tp_conn_t    *conn;
    int               rc;

    hand_features = 0;
    rc            = hello_by_hand(&conn, &hello, &reply);
    CHECK(rc == -EPROTONOSUPPORT && strstr(sfs_error_detail(), "typed cursors") &&
              strstr(sfs_error_detail(), "capabilities") && strstr(sfs_error_detail(), "upgrade"),
          "a HELLO without features is refused, naming what it lacks: %s (%s)", sfs_strerror(rc),
          sfs_error_detail());
    sfs_tp_conn_destroy(conn);
    hand_features = SFS_FEATURES_THIS | (1ull << 63);
    rc            = hello_by_hand(&conn, &hello, &reply);
    CHECK(rc == 0 &&
              (reply.features & SFS_FEATURES_REQUIRED_OF_SERVER) == SFS_FEATURES_REQUIRED_OF_SERVER,
          "a HELLO with a feature bit the server does not know is answered with the server's "
          "features: %s (%#llx)",
          sfs_strerror(rc), (unsigned long long)reply.features);
    sfs_tp_conn_destroy(conn);
    hand_features = SFS_FEATURES_THIS;
    CHECK(honest_ping() == 0, "the server still serves honest clients after old peers");
}
