#define SFS_LOG_FAC "auth"
#include "sfs_identity.h"

#include "sfs_alloc.h"
#include "sfs_errno.h"
#include "sfs_log.h"
#include "sfs_munge.h"
#include "sfs_time.h"

#include <arpa/inet.h>
#include <grp.h>
#include <netdb.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>

#define SFS_IDENTITY_MAX_ADDRS 256
#define SFS_IDENTITY_CACHE     64    /* users whose groups are remembered */
#define SFS_IDENTITY_CACHE_MS  60000 /* for this long (a changed /etc/group shows after it) */

/* Groups looked up for a user, so that an MPI job whose every rank opens
 * sessions to every server does not ask the user database (NSS: LDAP, sssd)
 * once per session: the lookups run on the progress thread. */
typedef struct sfs_identity_groups {
    uint32_t uid;
    uint32_t gid;
    uint64_t expires_ms; /* 0: unused */
    uint32_t group_count;
    uint32_t groups[SFS_CRED_GROUPS_MAX];
} sfs_identity_groups_t;

struct sfs_identity {
    uint32_t              trusted[SFS_IDENTITY_MAX_ADDRS]; /* IPv4, network order */
    uint32_t              trusted_count;
    int                   has_admin_group;
    uint32_t              admin_gid;
    uint32_t              service_uid; /* the user the servers run as */
    uint64_t              squashed;    /* sessions squashed so far (logged at the first few) */
    sfs_identity_groups_t cache[SFS_IDENTITY_CACHE]; /* progress thread only */
};

static void sfs_identity_trust(sfs_identity_t *identity, uint32_t addr)
{
    for (uint32_t i = 0; i < identity->trusted_count; i++) {
        if (identity->trusted[i] == addr) {
            return;
        }
    }
    if (identity->trusted_count < SFS_IDENTITY_MAX_ADDRS) {
        identity->trusted[identity->trusted_count++] = addr;
    }
}

static void sfs_identity_trust_name(sfs_identity_t *identity, const char *name)
{
    struct addrinfo hints, *res = NULL, *ai;

    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_INET;
    if (getaddrinfo(name, NULL, &hints, &res) != 0) {
        sfs_warn("trusted host %s: its address cannot be resolved; root there is squashed", name);
        return;
    }
    for (ai = res; ai; ai = ai->ai_next) {
        sfs_identity_trust(identity, ((struct sockaddr_in *)ai->ai_addr)->sin_addr.s_addr);
    }
    freeaddrinfo(res);
}

/* The origin address this host's munged puts into credentials. */
static int sfs_identity_own_origin(const sfs_config_t *config, uint32_t *addr_p)
{
    sfs_munge_info_t info;
    char            *cred = NULL;
    int              rc   = sfs_munge_encode(config->munge_socket, "origin", 6, &cred);

    if (rc == 0) {
        rc = sfs_munge_decode(config->munge_socket, cred, "origin", 6, &info);
    }
    free(cred);
    if (rc == 0) {
        *addr_p = info.origin_ipv4;
    }
    return rc;
}

int sfs_identity_create(const sfs_config_t *config, const char *this_host,
                        sfs_identity_t **identity_p)
{
    sfs_identity_t *identity;
    int             rc;

    uint32_t origin;

    if (!SFS_ALLOC_PTR(identity)) {
        return -ENOMEM;
    }
    /* users cannot connect without it: say so at start, not at each client */
    rc = sfs_identity_own_origin(config, &origin);
    if (rc) {
        free(identity);
        return sfs_error_set(rc,
                             "security.mode is munge, but munged does not answer at %s (%s): "
                             "start it (systemctl start munge, with the site's key in "
                             "/etc/munge/munge.key) or give the service one of its own "
                             "(security.munged_key)",
                             config->munge_socket, sfs_error_detail());
    }
    for (uint32_t i = 0; i < config->trusted_host_count; i++) {
        const char              *name = config->trusted_hosts[i];
        const sfs_config_host_t *host = sfs_config_find_host(config, name);

        sfs_identity_trust_name(identity, name);
        if (host && host->address[0]) {
            sfs_identity_trust_name(identity, host->address);
        }
        if (sfs_config_host_matches(name, this_host)) {
            sfs_identity_trust(identity, origin);
        }
    }
    /* the servers' own user owns every chunk file and the metadata store
     * anyway: it administers the service (a private one-host service of
     * an ordinary user is stopped by that user) */
    identity->service_uid = (uint32_t)geteuid();
    if (config->admin_group[0]) {
        struct group *group = getgrnam(config->admin_group);

        if (!group) {
            free(identity);
            return sfs_error_set(-ENOENT, "security.admin_group: no group '%s' on this host",
                                 config->admin_group);
        }
        identity->has_admin_group = 1;
        identity->admin_gid       = (uint32_t)group->gr_gid;
    }
    *identity_p = identity;
    return 0;
}

void sfs_identity_destroy(sfs_identity_t *identity)
{
    free(identity);
}

static int sfs_identity_is_trusted(const sfs_identity_t *identity, uint32_t addr)
{
    for (uint32_t i = 0; i < identity->trusted_count; i++) {
        if (identity->trusted[i] == addr) {
            return 1;
        }
    }
    return 0;
}

/* Supplementary groups from this host's user database. */
static void sfs_identity_lookup_groups(uint32_t uid, uint32_t gid, sfs_cred_t *cred)
{
    struct passwd pw, *found = NULL;
    char          buf[4096];
    gid_t         groups[SFS_CRED_GROUPS_MAX + 1];
    int           count = SFS_CRED_GROUPS_MAX + 1;

    cred->group_count = 0;
    if (getpwuid_r((uid_t)uid, &pw, buf, sizeof(buf), &found) != 0 || !found) {
        return; /* unknown here: only the primary group counts */
    }
    if (getgrouplist(pw.pw_name, (gid_t)gid, groups, &count) < 0) {
        count = SFS_CRED_GROUPS_MAX + 1; /* more than fit: keep what did */
    }
    for (int i = 0; i < count && cred->group_count < SFS_CRED_GROUPS_MAX; i++) {
        if ((uint32_t)groups[i] != gid) {
            cred->groups[cred->group_count++] = (uint32_t)groups[i];
        }
    }
}

/* The same, remembered for SFS_IDENTITY_CACHE_MS. */
static void sfs_identity_groups(sfs_identity_t *identity, uint32_t uid, uint32_t gid,
                                sfs_cred_t *cred)
{
    uint64_t               now    = sfs_time_ms();
    sfs_identity_groups_t *oldest = &identity->cache[0];

    for (uint32_t i = 0; i < SFS_IDENTITY_CACHE; i++) {
        sfs_identity_groups_t *entry = &identity->cache[i];

        if (entry->expires_ms > now && entry->uid == uid && entry->gid == gid) {
            cred->group_count = entry->group_count;
            memcpy(cred->groups, entry->groups, entry->group_count * sizeof(*entry->groups));
            return;
        }
        if (entry->expires_ms < oldest->expires_ms) {
            oldest = entry;
        }
    }
    sfs_identity_lookup_groups(uid, gid, cred);
    oldest->uid         = uid;
    oldest->gid         = gid;
    oldest->expires_ms  = now + SFS_IDENTITY_CACHE_MS;
    oldest->group_count = cred->group_count;
    memcpy(oldest->groups, cred->groups, cred->group_count * sizeof(*cred->groups));
}

int sfs_identity_resolve(void *arg, const sfs_tp_proof_t *proof, sfs_cred_t *cred)
{
    sfs_identity_t *identity              = arg;
    char            addr[INET_ADDRSTRLEN] = "?";

    memset(cred, 0, sizeof(*cred));
    inet_ntop(AF_INET, &proof->origin_ipv4, addr, sizeof(addr));
    if (proof->uid == 0 && !sfs_identity_is_trusted(identity, proof->origin_ipv4)) {
        cred->uid   = SFS_UID_NOBODY;
        cred->gid   = SFS_GID_NOBODY;
        cred->flags = SFS_CRED_SQUASHED;
        if (identity->squashed++ < 10) {
            sfs_info("root of %s pid %u (%s, origin %s) squashed to nobody: the host is not in "
                     "security.trusted_hosts",
                     proof->peer_host, proof->peer_pid, proof->peer_program, addr);
        }
        return 0;
    }
    cred->uid = proof->uid;
    cred->gid = proof->gid;
    sfs_identity_groups(identity, proof->uid, proof->gid, cred);
    if (proof->uid == 0) {
        cred->flags |= SFS_CRED_ROOT | SFS_CRED_ADMIN;
    }
    if (proof->uid != 0 && proof->uid == identity->service_uid) {
        cred->flags |= SFS_CRED_ADMIN;
    }
    if (identity->has_admin_group && sfs_cred_in_group(cred, identity->admin_gid)) {
        cred->flags |= SFS_CRED_ADMIN;
    }
    sfs_debug("%s pid %u (%s, origin %s): uid %u gid %u, %u groups%s", proof->peer_host,
              proof->peer_pid, proof->peer_program, addr, cred->uid, cred->gid, cred->group_count,
              (cred->flags & SFS_CRED_ADMIN) ? ", admin" : "");
    return 0;
}
