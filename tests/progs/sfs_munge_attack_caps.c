/* sfs_munge_attack: a MUNGE session that claims to be a server (5), and
 * storage I/O without a valid capability (6). */
#include "sfs_munge_attack.h"

/* ---------------------------------------------------------------------- */
/* 5: a MUNGE session that says it is a server                             */

int call_on(sfs_tp_conn_t *conn, uint32_t opcode, const void *args, size_t args_length,
            char *detail, size_t detail_size)
{
    sfs_tp_rpc_params_t params;
    sfs_tp_rpc_t       *rpc;
    int                 rc;

    memset(&params, 0, sizeof(params));
    params.opcode      = opcode;
    params.args        = args;
    params.args_length = args_length;
    params.alloc_reply = 1;
    params.timeout_ms  = 5000;
    rc                 = sfs_tp_call(conn, &params, &rpc);
    snprintf(detail, detail_size, "%s",
             rc == 0 ? "served" : (rpc ? sfs_tp_rpc_error_detail(rpc) : sfs_error_detail()));
    sfs_tp_rpc_release(rpc);
    return rc;
}

void attack_server_claim(void)
{
    sfs_register_req_t *reg = calloc(1, sizeof(*reg));
    uint8_t             args[SFS_PROTO_ARGS_MAX];
    char                detail[SFS_TP_DETAIL_MAX];
    sfs_wbuf_t          wb;
    hand_t              h;
    char               *cred;
    int                 rc;

    rc   = hello_by_hand(SFS_PEER_SERVER, &h);
    cred = rc ? NULL : client_cred(&h, munge_socket, 0);
    rc   = rc ? rc : auth_by_hand(&h, cred);
    free(cred);
    CHECK(rc == 0, "a MUNGE session that claims to be a server rank authenticates as root (%s)",
          auth_detail);
    if (rc) {
        hand_close(&h);
        free(reg);
        return;
    }
    /* take over rank 1 and its targets, pointing them at us */
    reg->rank         = map && map->node_count > 1 ? map->nodes[1].node_id : 1;
    reg->roles        = SFS_ROLE_STORAGE;
    reg->pid          = (uint32_t)getpid();
    reg->target_count = 1;
    snprintf(reg->host, sizeof(reg->host), "attacker");
    reg->address              = worker->address;
    reg->address_length       = worker->address_length;
    reg->targets[0].target_id = map && map->target_count ? map->targets[0].target_id : 101;
    reg->targets[0].capacity  = 1ull << 40;
    reg->targets[0].free      = 1ull << 40;
    snprintf(reg->targets[0].dir, sizeof(reg->targets[0].dir), "/tmp");
    sfs_wbuf_init(&wb, args, sizeof(args));
    sfs_proto_register_req_pack(&wb, reg);
    free(reg);
    rc = call_on(h.conn, SFS_OP_REGISTER, args, wb.length, detail, sizeof(detail));
    CHECK(rc == -EPERM, "5. REGISTER (taking over rank 1's target) on it is refused: %s (%s)",
          sfs_strerror(rc), detail);
    rc = call_on(h.conn, SFS_OP_HEARTBEAT, NULL, 0, detail, sizeof(detail));
    CHECK(rc == -EPERM, "5. HEARTBEAT on it is refused: %s (%s)", sfs_strerror(rc), detail);
    rc = call_on(h.conn, SFS_OP_STOP, NULL, 0, detail, sizeof(detail));
    CHECK(rc == -EPERM, "5. STOP (management's order to a rank) on it is refused: %s (%s)",
          sfs_strerror(rc), detail);
    {
        /* the mirror states management keeps: a storage member said
         * needs-resync (its buddy then never promoted), the metadata mirror
         * said good (a stale copy taken for one in step) */
        sfs_mirror_report_req_t     report = {.count = 1};
        sfs_meta_mirror_state_req_t meta   = {.node_id = 0, .state = SFS_MIRROR_STATE_GOOD};

        report.entries[0] = (sfs_mirror_report_entry_t){101, 201, SFS_MIRROR_STATE_NEEDS_RESYNC};
        sfs_wbuf_init(&wb, args, sizeof(args));
        sfs_proto_mirror_report_req_pack(&wb, &report);
        rc = call_on(h.conn, SFS_OP_MIRROR_REPORT, args, wb.length, detail, sizeof(detail));
        CHECK(rc == -EPERM, "5. MIRROR_REPORT (a member's state) on it is refused: %s (%s)",
              sfs_strerror(rc), detail);
        sfs_wbuf_init(&wb, args, sizeof(args));
        sfs_proto_meta_mirror_state_req_pack(&wb, &meta);
        rc = call_on(h.conn, SFS_OP_META_MIRROR_STATE, args, wb.length, detail, sizeof(detail));
        CHECK(rc == -EPERM,
              "5. META_MIRROR_STATE (the metadata mirror's state) on it is refused: %s (%s)",
              sfs_strerror(rc), detail);
    }
    hand_close(&h);
    CHECK(honest_ping() == 0, "the service still serves honest MUNGE clients");
}

/* ---------------------------------------------------------------------- */
/* 6: capabilities                                                         */

int meta_open(sfs_tp_conn_t *meta, uint32_t opcode, const char *path, uint32_t flags,
              sfs_attr_t *attr, sfs_cap_t *cap)
{
    sfs_meta_req_t     *req = calloc(1, sizeof(*req));
    uint8_t             args[SFS_PROTO_ARGS_MAX];
    sfs_wbuf_t          wb;
    sfs_rbuf_t          rb;
    sfs_tp_rpc_params_t params;
    sfs_tp_rpc_t       *rpc;
    const void         *reply;
    size_t              length;
    int                 rc;

    snprintf(req->path, sizeof(req->path), "%s", path);
    req->flags        = flags;
    req->mode         = 0644;
    req->stripe_count = 1;
    sfs_wbuf_init(&wb, args, sizeof(args));
    sfs_proto_meta_req_pack(&wb, opcode, req);
    free(req);
    memset(&params, 0, sizeof(params));
    params.opcode      = opcode;
    params.args        = args;
    params.args_length = wb.length;
    params.timeout_ms  = 5000;
    rc                 = sfs_tp_call(meta, &params, &rpc);
    if (rc == 0) {
        reply = sfs_tp_rpc_reply_args(rpc, &length);
        sfs_rbuf_init(&rb, reply, length);
        sfs_proto_attr_unpack(&rb, attr);
        if (opcode == SFS_OP_CREATE) {
            (void)sfs_rbuf_u8(&rb);
        }
        memset(cap, 0, sizeof(*cap));
        if (sfs_rbuf_remaining(&rb) >= SFS_CAP_WIRE_SIZE) {
            sfs_cap_unpack(&rb, cap);
        }
        rc = rb.error ? -EPROTO : 0;
    } else {
        printf("  (%s %s: %s)\n", sfs_op_name(opcode), path,
               rpc ? sfs_tp_rpc_error_detail(rpc) : sfs_error_detail());
    }
    sfs_tp_rpc_release(rpc);
    return rc;
}

char chunk_detail[SFS_TP_DETAIL_MAX];

/* A chunk request for [0, ATTACK_LENGTH) of `entry_id` on `target_id` with
 * `cap`; READ into `in`, WRITE from `out`. */
int chunk_call(sfs_tp_conn_t *conn, uint32_t opcode, uint32_t target_id, uint64_t entry_id,
               const sfs_cap_t *cap, void *in, const void *out)
{
    sfs_chunk_req_t    *chunk = calloc(1, sizeof(*chunk));
    uint8_t             args[512];
    struct iovec        iov;
    sfs_wbuf_t          wb;
    sfs_tp_rpc_params_t params;
    sfs_tp_rpc_t       *rpc;
    int                 rc;

    chunk->target_id = target_id;
    chunk->entry_id  = entry_id;
    chunk->cap       = *cap;
    if (opcode == SFS_OP_READ || opcode == SFS_OP_WRITE) {
        chunk->extent_count      = 1;
        chunk->extents[0].length = ATTACK_LENGTH;
    }
    sfs_wbuf_init(&wb, args, sizeof(args));
    sfs_proto_chunk_req_pack(&wb, opcode, chunk);
    free(chunk);
    memset(&params, 0, sizeof(params));
    params.opcode      = opcode;
    params.args        = args;
    params.args_length = wb.length;
    params.timeout_ms  = 5000;
    if (opcode == SFS_OP_READ) {
        iov.iov_base           = in;
        iov.iov_len            = ATTACK_LENGTH;
        params.reply_iov       = &iov;
        params.reply_iov_count = 1;
    } else if (opcode == SFS_OP_WRITE) {
        iov.iov_base         = (void *)out;
        iov.iov_len          = ATTACK_LENGTH;
        params.payload       = &iov;
        params.payload_count = 1;
    }
    rc = sfs_tp_call(conn, &params, &rpc);
    snprintf(chunk_detail, sizeof(chunk_detail), "%s",
             rc == 0 ? "served" : (rpc ? sfs_tp_rpc_error_detail(rpc) : sfs_error_detail()));
    sfs_tp_rpc_release(rpc);
    return rc;
}

const sfs_map_node_t *node_of_target(uint32_t target_id)
{
    const sfs_map_target_t *target = map ? sfs_map_find_target(map, target_id) : NULL;

    return target ? sfs_map_find_node(map, target->node_id) : NULL;
}

/* 6g: another user (nobody) with our valid capability. A child process
 * takes uid 65534 and runs this program again with --read-with: its own
 * MUNGE session (munged vouches for uid 65534) reads with the capability
 * granted to uid 0. */
int read_as_nobody(char **argv, uint32_t target, uint64_t entry_id, const sfs_cap_t *cap)
{
    char  target_s[16], entry_s[32], cap_s[2 * SFS_CAP_WIRE_SIZE + 1];
    char  cap_wire[SFS_CAP_WIRE_SIZE];
    char *args[9];
    int   status = -1;
    pid_t child;

    sfs_wbuf_t wb;

    sfs_wbuf_init(&wb, cap_wire, sizeof(cap_wire));
    sfs_cap_pack(&wb, cap);
    for (size_t i = 0; i < sizeof(cap_wire); i++) {
        snprintf(cap_s + 2 * i, 3, "%02x", (uint8_t)cap_wire[i]);
    }
    snprintf(target_s, sizeof(target_s), "%u", target);
    snprintf(entry_s, sizeof(entry_s), "%" PRIu64, entry_id);
    args[0] = argv[0];
    args[1] = "--read-with";
    args[2] = argv[1];
    args[3] = argv[2];
    args[4] = argv[3];
    args[5] = target_s;
    args[6] = entry_s;
    args[7] = cap_s;
    args[8] = NULL;
    fflush(stdout);
    child = fork();
    if (child == 0) {
        if (setgroups(0, NULL) != 0 || setgid(SFS_GID_NOBODY) != 0 || setuid(SFS_UID_NOBODY) != 0) {
            perror("cannot become nobody");
            _exit(3);
        }
        execv("/proc/self/exe", args);
        perror("execv");
        _exit(3);
    }
    if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status)) {
        return -1;
    }
    return WEXITSTATUS(status);
}

void attack_capabilities(char **argv)
{
    static uint8_t        content[ATTACK_LENGTH], junk[ATTACK_LENGTH], got[ATTACK_LENGTH];
    const sfs_map_node_t *meta_node = map ? sfs_map_find_node(map, map->meta_node) : NULL;
    const sfs_map_node_t *storage_node;
    sfs_tp_conn_t        *meta = NULL, *storage = NULL;
    sfs_attr_t            attr, other;
    sfs_cap_t             rw, ro, other_cap, bad;
    uint32_t              target;
    int                   rc;

    for (size_t i = 0; i < sizeof(content); i++) {
        content[i] = (uint8_t)(i * 7 + 1);
        junk[i]    = 0xee;
    }
    rc = meta_node ? honest_conn(worker, meta_node, &meta) : -ENOENT;
    rc = rc ? rc
            : meta_open(meta, SFS_OP_CREATE, ATTACK_FILE, SFS_OPEN_READ | SFS_OPEN_WRITE, &attr,
                        &rw);
    rc = rc ? rc
            : meta_open(meta, SFS_OP_CREATE, OTHER_FILE, SFS_OPEN_READ | SFS_OPEN_WRITE, &other,
                        &other_cap);
    rc = rc ? rc : meta_open(meta, SFS_OP_LOOKUP, ATTACK_FILE, SFS_OPEN_READ, &attr, &ro);
    CHECK(rc == 0 && attr.pattern_targets >= 1 && rw.access == (SFS_CAP_READ | SFS_CAP_WRITE) &&
              ro.access == SFS_CAP_READ && ro.entry_id == attr.entry_id,
          "6. two files are created and one looked up for reading: read-write and read-only "
          "capabilities (%s)",
          sfs_strerror(rc));
    if (rc || attr.pattern_targets < 1) {
        sfs_tp_conn_destroy(meta);
        return;
    }
    target       = attr.pattern.targets[0];
    storage_node = node_of_target(target);
    rc           = storage_node ? honest_conn(worker, storage_node, &storage) : -ENODEV;
    CHECK(rc == 0, "a MUNGE session to the rank of target %u (%s)", target,
          rc ? sfs_error_detail() : "");
    if (rc) {
        sfs_tp_conn_destroy(meta);
        return;
    }
    rc = chunk_call(storage, SFS_OP_WRITE, target, attr.entry_id, &rw, NULL, content);
    CHECK(rc == 0, "a WRITE with the read-write capability is served (%s)", chunk_detail);

    memset(&bad, 0, sizeof(bad));
    rc = chunk_call(storage, SFS_OP_READ, target, attr.entry_id, &bad, got, NULL);
    CHECK(rc == -EACCES, "6a. a READ with an all-zero capability is refused: %s (%s)",
          sfs_strerror(rc), chunk_detail);
    rc = chunk_call(storage, SFS_OP_CHUNK_STAT, target, attr.entry_id, &bad, NULL, NULL);
    CHECK(rc == -EACCES, "6a. a CHUNK_STAT with an all-zero capability is refused: %s (%s)",
          sfs_strerror(rc), chunk_detail);
    bad = ro;
    bad.mac[5] ^= 0x01;
    rc = chunk_call(storage, SFS_OP_READ, target, attr.entry_id, &bad, got, NULL);
    CHECK(rc == -EACCES, "6b. a READ with one MAC byte flipped is refused: %s (%s)",
          sfs_strerror(rc), chunk_detail);
    rc = chunk_call(storage, SFS_OP_READ, target, other.entry_id, &ro, got, NULL);
    CHECK(rc == -EACCES,
          "6c. a READ of another file's entry with this capability is refused: %s (%s)",
          sfs_strerror(rc), chunk_detail);
    rc = chunk_call(storage, SFS_OP_WRITE, target, attr.entry_id, &ro, NULL, junk);
    CHECK(rc == -EACCES, "6d. a WRITE with the read-only capability is refused: %s (%s)",
          sfs_strerror(rc), chunk_detail);
    rc = chunk_call(storage, SFS_OP_TRUNCATE, target, attr.entry_id, &ro, NULL, NULL);
    CHECK(rc == -EACCES, "6d. a TRUNCATE with the read-only capability is refused: %s (%s)",
          sfs_strerror(rc), chunk_detail);
    bad     = ro;
    bad.uid = 1000;
    rc      = chunk_call(storage, SFS_OP_READ, target, attr.entry_id, &bad, got, NULL);
    CHECK(rc == -EACCES, "6e. a READ with the capability's uid changed is refused: %s (%s)",
          sfs_strerror(rc), chunk_detail);
    bad = ro;
    bad.access |= SFS_CAP_WRITE;
    rc = chunk_call(storage, SFS_OP_WRITE, target, attr.entry_id, &bad, NULL, junk);
    CHECK(rc == -EACCES,
          "6e. a WRITE with write added to the read-only capability is refused: "
          "%s (%s)",
          sfs_strerror(rc), chunk_detail);
    bad = ro;
    bad.expires_s += 1000000;
    rc = chunk_call(storage, SFS_OP_READ, target, attr.entry_id, &bad, got, NULL);
    CHECK(rc == -EACCES, "6e. a READ with the capability's expiry moved on is refused: %s (%s)",
          sfs_strerror(rc), chunk_detail);

    memset(got, 0, sizeof(got));
    rc = chunk_call(storage, SFS_OP_READ, target, attr.entry_id, &ro, got, NULL);
    CHECK(rc == 0 && memcmp(got, content, sizeof(got)) == 0,
          "6f. a READ with the valid capability is served, the data as written (%s%s)",
          chunk_detail, rc == 0 && memcmp(got, content, sizeof(got)) ? ", other data" : "");
    rc = read_as_nobody(argv, target, attr.entry_id, &ro);
    CHECK(rc == 0, "6g. user nobody's READ with the capability granted to uid 0 is refused (%s)",
          rc == 0   ? "refused"
          : rc == 1 ? "served"
                    : "the child failed");
    sfs_tp_conn_destroy(storage);
    sfs_tp_conn_destroy(meta);
    printf("skipped: an expired capability (security.capability_lifetime is at least 10 s)\n");
    CHECK(honest_ping() == 0, "the service still serves honest MUNGE clients");
}
