/* stripefs-ctl verbs about the servers: listnodes, listtargets, df, net,
 * check-servers, shutdown. */
#include "stripefs_ctl.h"

#include "sfs_admin.h"
#include "sfs_admin_migrate.h"
#include "sfs_map.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ctl_listnodes(ctl_t *ctl, int argc, char **argv)
{
    const char *type = NULL;
    sfs_map_t  *map;
    uint32_t    want = 0;
    int         rc;

    for (int i = 1; i < argc; i++) {
        if (strncmp(argv[i], "--nodetype=", 11) == 0) {
            type = argv[i] + 11;
        } else if (strcmp(argv[i], "--nodetype") == 0 && i + 1 < argc) {
            type = argv[++i];
        } else {
            fprintf(stderr, "stripefs-ctl listnodes: unexpected '%s'\n", argv[i]);
            return EXIT_USAGE;
        }
    }
    if (type) {
        want = strcmp(type, "management") == 0 || strcmp(type, "mgmt") == 0 ? SFS_ROLE_MGMT
               : strcmp(type, "meta") == 0                                  ? SFS_ROLE_META
               : strcmp(type, "storage") == 0                               ? SFS_ROLE_STORAGE
                                                                            : 0;
        if (!want) {
            fprintf(stderr, "stripefs-ctl listnodes: --nodetype is management, meta or storage\n");
            return EXIT_USAGE;
        }
    }
    rc = sfs_admin_map(ctl->client, &map);
    if (rc) {
        return ctl_fail("listnodes", rc);
    }
    printf("%-6s %-20s %-18s %-17s %-8s %s\n", "NODE", "HOST", "ROLES", "STATE", "PID",
           "LAST_CONTACT");
    for (uint32_t i = 0; i < map->node_count; i++) {
        const sfs_map_node_t *node = &map->nodes[i];
        char                  roles[64];

        if (want && !(node->roles & want)) {
            continue;
        }
        printf("%-6u %-20s %-18s %-17s %-8u %.1fs\n", node->node_id, node->host,
               sfs_roles_string(node->roles, roles, sizeof(roles)), sfs_state_name(node->state),
               node->pid, (double)node->last_contact_ms / 1000.0);
    }
    sfs_map_destroy(map);
    return 0;
}

/* A mirror group member's role, consistency state and resync progress:
 * "primary good", "secondary resyncing 3/10"; "-" for other targets. */
static void ctl_mirror_column(const sfs_map_target_t *t, char *buf, size_t size)
{
    const char *role = t->mirror_primary == t->target_id ? "primary" : "secondary";

    if (!t->mirror_primary) {
        snprintf(buf, size, "-");
    } else if (t->mirror_state == SFS_MIRROR_STATE_RESYNCING) {
        snprintf(buf, size, "%s %s %llu/%llu", role, sfs_mirror_state_name(t->mirror_state),
                 (unsigned long long)t->resync_done, (unsigned long long)t->resync_total);
    } else if (t->mirror_state == SFS_MIRROR_STATE_BAD && t->resync_total) {
        snprintf(buf, size, "%s rebuilding %llu/%llu", role, (unsigned long long)t->resync_done,
                 (unsigned long long)t->resync_total);
    } else {
        snprintf(buf, size, "%s %s", role, sfs_mirror_state_name(t->mirror_state));
    }
}

int ctl_listtargets(ctl_t *ctl, int argc, char **argv)
{
    static sfs_migrate_reply_t draining;
    sfs_map_t                 *map;
    int                        rc;

    (void)argc;
    (void)argv;
    rc = sfs_admin_map(ctl->client, &map);
    if (rc) {
        return ctl_fail("listtargets", rc);
    }
    /* draining targets (migrate --from): a server without them has none */
    if (sfs_admin_drain(ctl->client, SFS_DRAIN_LIST, 0, &draining) != 0) {
        draining.count = 0;
    }
    printf("%-7s %-5s %-16s %-17s %10s %10s %5s  %-24s %s\n", "TARGET", "NODE", "HOST", "STATE",
           "CAPACITY", "FREE", "FREE%", "MIRROR", "DIR");
    for (uint32_t i = 0; i < map->target_count; i++) {
        const sfs_map_target_t *t    = &map->targets[i];
        const sfs_map_node_t   *node = sfs_map_find_node(map, t->node_id);
        char                    cap[32], free_text[32], mirror[64], state[32];

        ctl_mirror_column(t, mirror, sizeof(mirror));
        snprintf(state, sizeof(state), "%s", sfs_state_name(t->state));
        for (uint32_t d = 0; d < draining.count; d++) {
            if (draining.targets[d] == t->target_id) {
                snprintf(state, sizeof(state), "%s,draining", sfs_state_name(t->state));
            }
        }
        printf("%-7u %-5u %-16s %-17s %10s %10s %4.0f%%  %-24s %s\n", t->target_id, t->node_id,
               node ? node->host : "?", state, ctl_size(t->capacity, cap, sizeof(cap)),
               ctl_size(t->free, free_text, sizeof(free_text)),
               t->capacity ? 100.0 * (double)t->free / (double)t->capacity : 0.0, mirror, t->dir);
    }
    sfs_map_destroy(map);
    return 0;
}

/* Say which targets were counted as one file system, and where this host
 * could not tell (targets of another host with the same capacity). */
static void ctl_df_shared(const sfs_map_t *map)
{
    uint32_t *group_of = calloc(map->target_count ? map->target_count : 1, sizeof(*group_of));

    if (!group_of || sfs_admin_fs_groups(map, group_of) != 0) {
        free(group_of);
        return;
    }
    for (uint32_t i = 0; i < map->target_count; i++) {
        const sfs_map_node_t *node   = sfs_map_find_node(map, map->targets[i].node_id);
        uint32_t              merged = 0, alike = 0;

        if (group_of[i] != i || map->targets[i].state != SFS_STATE_ONLINE) {
            continue;
        }
        for (uint32_t j = i + 1; j < map->target_count; j++) {
            const sfs_map_node_t *other = sfs_map_find_node(map, map->targets[j].node_id);

            merged += group_of[j] == i;
            /* same host, same size, not known to be one: it may be */
            alike += group_of[j] == j && map->targets[j].state == SFS_STATE_ONLINE && node &&
                     other && strcmp(other->host, node->host) == 0 &&
                     map->targets[j].capacity == map->targets[i].capacity;
        }
        if (merged) {
            printf("NOTE: %u targets share one file system (target %u's, on %s); the total "
                   "counts it once:",
                   merged + 1, map->targets[i].target_id, node ? node->host : "?");
            for (uint32_t j = i; j < map->target_count; j++) {
                if (group_of[j] == i) {
                    printf(" %u", map->targets[j].target_id);
                }
            }
            printf("\n");
        } else if (alike) {
            printf("NOTE: target %u and %u other%s on %s have the same capacity; this host "
                   "cannot tell whether they share a file system, so the total counts each\n",
                   map->targets[i].target_id, alike, alike == 1 ? "" : "s",
                   node ? node->host : "?");
        }
    }
    free(group_of);
}

int ctl_df(ctl_t *ctl, int argc, char **argv)
{
    sfs_statfs_t      st;
    sfs_meta_statfs_t meta;
    sfs_map_t        *map;
    char              a[32], b[32], c[32];
    int               rc;

    rc = ctl_listtargets(ctl, argc, argv);
    if (rc) {
        return rc;
    }
    rc = sfs_statfs(ctl->client, &st);
    if (rc == 0) {
        rc = sfs_admin_meta_statfs(ctl->client, &meta);
    }
    if (rc) {
        return ctl_fail("df", rc);
    }
    printf("\nTOTAL: %s capacity, %s used, %s free (%u of %u targets online, on %u file "
           "system%s as far as this host can tell)\n",
           ctl_size(st.capacity, a, sizeof(a)), ctl_size(st.capacity - st.free, b, sizeof(b)),
           ctl_size(st.free, c, sizeof(c)), st.targets_online, st.targets, st.filesystems,
           st.filesystems == 1 ? "" : "s");
    if (sfs_admin_map(ctl->client, &map) == 0) {
        ctl_df_shared(map);
        sfs_map_destroy(map);
    }
    ctl_pool_df(ctl);
    printf("METADATA: %" PRIu64 " files, %" PRIu64 " directories, %" PRIu64
           " removed files awaiting chunk deletion\n",
           meta.files, meta.dirs, meta.pending_chunk_deletes);
    return 0;
}

int ctl_check_servers(ctl_t *ctl, int argc, char **argv)
{
    sfs_map_t *map;
    int        rc, failures = 0;

    (void)argc;
    (void)argv;
    rc = sfs_admin_map(ctl->client, &map);
    if (rc) {
        return ctl_fail("check-servers", rc);
    }
    for (uint32_t i = 0; i < map->node_count; i++) {
        const sfs_map_node_t *node = &map->nodes[i];
        char                  roles[64];
        double                rtt;

        rc = sfs_admin_ping(ctl->client, node->node_id, &rtt);
        if (rc) {
            failures++;
            printf("rank %-4u %-16s %-18s UNREACHABLE: %s\n", node->node_id, node->host,
                   sfs_roles_string(node->roles, roles, sizeof(roles)), sfs_client_error());
        } else {
            printf("rank %-4u %-16s %-18s reachable, %.0f us round trip (%s)\n", node->node_id,
                   node->host, sfs_roles_string(node->roles, roles, sizeof(roles)), rtt,
                   sfs_state_name(node->state));
        }
    }
    printf("%u server rank%s checked, %d unreachable\n", map->node_count,
           map->node_count == 1 ? "" : "s", failures);
    sfs_map_destroy(map);
    return failures ? 1 : 0;
}

static const char *ctl_peer_kind(uint32_t kind)
{
    return kind == SFS_PEER_SERVER ? "server" : kind == SFS_PEER_ADMIN ? "admin" : "client";
}

int ctl_net(ctl_t *ctl, int argc, char **argv)
{
    sfs_map_t *map;
    int        rc, failures = 0;

    (void)argc;
    (void)argv;
    rc = sfs_admin_map(ctl->client, &map);
    if (rc) {
        return ctl_fail("net", rc);
    }
    for (uint32_t i = 0; i < map->node_count; i++) {
        const sfs_map_node_t *node = &map->nodes[i];
        sfs_admin_session_t  *sessions;
        uint32_t              count;
        char                  mine[256], roles[64];

        printf("rank %u on %s (%s)\n", node->node_id, node->host,
               sfs_roles_string(node->roles, roles, sizeof(roles)));
        if (sfs_admin_transports(ctl->client, node->node_id, mine, sizeof(mine)) == 0) {
            printf("  this process reaches it over: %s\n", mine);
        }
        rc = sfs_admin_sessions(ctl->client, node->node_id, &sessions, &count);
        if (rc) {
            printf("  UNREACHABLE: %s\n", sfs_client_error());
            failures++;
            continue;
        }
        printf("  %u connected peer%s:\n", count, count == 1 ? "" : "s");
        for (uint32_t s = 0; s < count; s++) {
            printf("    %-6s %-16s pid %-8u %-20s via %-28s for %.0fs\n",
                   ctl_peer_kind(sessions[s].peer_kind), sessions[s].host, sessions[s].pid,
                   sessions[s].program, sessions[s].transports,
                   (double)sessions[s].age_ms / 1000.0);
        }
        free(sessions);
    }
    sfs_map_destroy(map);
    return failures ? 1 : 0;
}

int ctl_shutdown(ctl_t *ctl, int argc, char **argv)
{
    int rc;

    (void)argc;
    (void)argv;
    rc = sfs_admin_shutdown(ctl->client);
    if (rc) {
        return ctl_fail("shutdown", rc);
    }
    printf("shutdown requested: every server rank flushes and exits\n");
    return 0;
}
