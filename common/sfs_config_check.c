/*
 * The config's rules beyond one key: paths (made absolute and cleaned
 * lexically, so that two spellings of a directory compare equal), the
 * characters a name may hold, the checks across keys run once a whole
 * config is read or generated (duplicate ids and directories, role hosts
 * that must match one host, timeouts, the security mode), and the rule by
 * which a short host name matches a full one.
 */
#define SFS_LOG_FAC "config"
#include "sfs_config_internal.h"
#include "sfs_errno.h"
#include "sfs_log.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* ------------------------------------------------------------------ */
/* Paths and names                                                     */

/* Lexically clean absolute `path` into `out`: no "", "." or ".." parts,
 * no trailing slash. */
static int sfs_config_path_clean(const char *path, char *out, size_t outlen)
{
    size_t len = 0;

    while (*path != '\0') {
        const char *part;
        size_t      part_len;

        while (*path == '/') {
            path++;
        }
        part     = path;
        part_len = strcspn(path, "/");
        path += part_len;
        if (part_len == 0 || (part_len == 1 && part[0] == '.')) {
            continue;
        }
        if (part_len == 2 && part[0] == '.' && part[1] == '.') {
            while (len > 0 && out[len - 1] != '/') {
                len--;
            }
            if (len > 0) {
                len--; /* the slash before the dropped part */
            }
            continue;
        }
        if (len + 1 + part_len + 1 > outlen) {
            return -ENAMETOOLONG;
        }
        out[len++] = '/';
        memcpy(out + len, part, part_len);
        len += part_len;
    }
    if (len == 0) {
        if (outlen < 2) {
            return -ENAMETOOLONG;
        }
        out[len++] = '/';
    }
    out[len] = '\0';
    return 0;
}

/* `path` made absolute (relative to `base_dir`) and cleaned. */
int sfs_config_path_resolve(const char *base_dir, const char *path, char *out, size_t outlen)
{
    char joined[2 * PATH_MAX + 2];

    if (path[0] == '/') {
        return sfs_config_path_clean(path, out, outlen);
    }
    if ((size_t)snprintf(joined, sizeof(joined), "%s/%s", base_dir, path) >= sizeof(joined)) {
        return -ENAMETOOLONG;
    }
    return sfs_config_path_clean(joined, out, outlen);
}

/* The directory relative paths in `name` are taken from, made absolute. */
int sfs_config_base_dir(const char *name, char *out, size_t outlen)
{
    char        cwd[PATH_MAX];
    char        dir[PATH_MAX];
    const char *slash = strrchr(name, '/');
    size_t      dir_len;

    if (slash == NULL) {
        snprintf(dir, sizeof(dir), ".");
    } else {
        dir_len = slash == name ? 1 : (size_t)(slash - name);
        if (dir_len >= sizeof(dir)) {
            return sfs_error_set(-ENAMETOOLONG, "config file name too long: %.80s...", name);
        }
        memcpy(dir, name, dir_len);
        dir[dir_len] = '\0';
    }
    if (dir[0] == '/') {
        return sfs_config_path_clean(dir, out, outlen);
    }
    if (getcwd(cwd, sizeof(cwd)) == NULL) {
        return sfs_error_set(-errno, "cannot get the current directory: %s", strerror(errno));
    }
    if (sfs_config_path_resolve(cwd, dir, out, outlen) != 0) {
        return sfs_error_set(-ENAMETOOLONG, "config directory name too long: %.80s...", cwd);
    }
    return 0;
}

/* Problems with a name for a given charset, or NULL. */
const char *sfs_config_check_name(const char *text, sfs_config_type_t type)
{
    for (const char *p = text; *p != '\0'; p++) {
        unsigned char c = (unsigned char)*p;

        switch (type) {
        case SFS_CONFIG_TYPE_CLUSTER:
        case SFS_CONFIG_TYPE_HOSTNAME:
            if (!isalnum(c) && c != '-' && c != '.' && c != '_') {
                return "use letters, digits, '-', '.' and '_' only";
            }
            break;
        case SFS_CONFIG_TYPE_ADDRESS:
            if (c <= 0x20 || c >= 0x7f) {
                return "no spaces, control or non-ASCII characters";
            }
            break;
        default:
            if (c < 0x20 || c == 0x7f) {
                return "no control characters";
            }
            break;
        }
    }
    if (text[0] == '\0') {
        return "the value is empty";
    }
    return NULL;
}

/* ------------------------------------------------------------------ */
/* Checks across keys (also run on generated configs)                  */

/* Where target `index`'s keys were given (all 0 for a generated config). */
static sfs_config_target_lines_t sfs_config_target_lines(const sfs_config_ctx_t *ctx,
                                                         uint32_t                index)
{
    sfs_config_target_lines_t none = {0, 0, 0};

    return ctx->target_lines ? ctx->target_lines[index] : none;
}

/* " at line N", or "" where there is no line (generated configs). */
static const char *sfs_config_at_line(int line, char *buf, size_t buflen)
{
    if (line <= 0) {
        return "";
    }
    snprintf(buf, buflen, " at line %d", line);
    return buf;
}

/* The role host `name` (given at `line` under `path`) must match exactly
 * one entry of the host list. */
static int sfs_config_check_role_host(const sfs_config_ctx_t *ctx, const char *path,
                                      const char *name, int line)
{
    const sfs_config_t      *config = ctx->config;
    const sfs_config_host_t *first  = NULL;
    char                     at_first[32], at_second[32];

    for (uint32_t i = 0; i < config->host_count; i++) {
        const sfs_config_host_t *host = &config->hosts[i];

        if (!sfs_config_host_matches(host->name, name)) {
            continue;
        }
        if (first != NULL) {
            return sfs_config_fail(
                ctx, line, path,
                "host '%s' matches both '%s'%s and '%s'%s of the hosts list; write the full name",
                name, first->name, sfs_config_at_line(first->line, at_first, sizeof(at_first)),
                host->name, sfs_config_at_line(host->line, at_second, sizeof(at_second)));
        }
        first = host;
    }
    if (first == NULL) {
        return sfs_config_fail(
            ctx, line, path, "host '%s' is not in the hosts list%s; add it there", name,
            sfs_config_at_line(ctx->lines[SFS_CONFIG_LINE_HOSTS], at_first, sizeof(at_first)));
    }
    return 0;
}

/* Without an explicit list, every host a role names is a host, once, by
 * its fullest name: "a" then "a.x.org" is one host a.x.org, while "a.x.org"
 * and "a.y.org" are two, which leaves a plain "a" ambiguous (caught later). */
static int sfs_config_collect_hosts(sfs_config_ctx_t *ctx)
{
    sfs_config_t *config = ctx->config;
    int           rc;

    /* the metadata mirror's host last, so that it does not change the
     * order of the others (ranks are dealt by it) */
    for (uint32_t role = 0; role < config->target_count + 3; role++) {
        int                mirror = role == config->target_count + 2;
        const char        *name   = role == 0   ? config->mgmt_host
                                    : role == 1 ? config->meta_host
                                    : mirror    ? config->meta_mirror_host
                                                : config->targets[role - 2].host;
        int                line   = role == 0   ? ctx->lines[SFS_CONFIG_LINE_MGMT_HOST]
                                    : role == 1 ? ctx->lines[SFS_CONFIG_LINE_META_HOST]
                                    : mirror    ? ctx->lines[SFS_CONFIG_LINE_META_MIRROR]
                                                : sfs_config_target_lines(ctx, role - 2).host;
        sfs_config_host_t *known  = NULL;

        if (name[0] == '\0') {
            continue; /* no metadata mirror */
        }

        for (uint32_t i = 0; i < config->host_count && known == NULL; i++) {
            if (sfs_config_host_matches(config->hosts[i].name, name)) {
                known = &config->hosts[i];
            }
        }
        if (known != NULL) {
            if (strchr(known->name, '.') == NULL && strchr(name, '.') != NULL) {
                snprintf(known->name, sizeof(known->name), "%s", name);
                known->line = line;
            }
            continue;
        }
        if (config->host_count == SFS_CONFIG_MAX_HOSTS) {
            return sfs_config_fail(ctx, line, "hosts", "too many hosts (at most %d)",
                                   SFS_CONFIG_MAX_HOSTS);
        }
        rc = sfs_config_add_host(ctx, name, line);
        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}

/* meta.mirror: a known host, not the metadata server's own unless
 * mirror.same_host allows it (one-host trials) and then in another
 * directory; meta.mirror_dir only with a mirror (default meta.dir). */
static int sfs_config_check_meta_mirror(sfs_config_ctx_t *ctx)
{
    sfs_config_t *config = ctx->config;
    int           rc;

    if (config->meta_mirror_host[0] == '\0') {
        if (config->meta_mirror_dir[0] != '\0') {
            return sfs_config_fail(ctx, ctx->lines[SFS_CONFIG_LINE_META_MIRROR_DIR],
                                   "meta.mirror_dir",
                                   "is set but meta.mirror (the mirror's host) is not");
        }
        return 0;
    }
    rc = sfs_config_check_role_host(ctx, "meta.mirror", config->meta_mirror_host,
                                    ctx->lines[SFS_CONFIG_LINE_META_MIRROR]);
    if (rc != 0) {
        return rc;
    }
    if (config->meta_mirror_dir[0] == '\0') {
        snprintf(config->meta_mirror_dir, sizeof(config->meta_mirror_dir), "%s", config->meta_dir);
    }
    if (!sfs_config_host_matches(config->meta_host, config->meta_mirror_host)) {
        return 0;
    }
    if (!config->mirror_same_host) {
        return sfs_config_fail(ctx, ctx->lines[SFS_CONFIG_LINE_META_MIRROR], "meta.mirror",
                               "%s is the metadata server's own host: the copy would be lost with "
                               "it (mirror.same_host: true allows it for one-host trials)",
                               config->meta_mirror_host);
    }
    if (strcmp(config->meta_mirror_dir, config->meta_dir) == 0) {
        return sfs_config_fail(ctx, ctx->lines[SFS_CONFIG_LINE_META_MIRROR_DIR], "meta.mirror_dir",
                               "%s is meta.dir, on the same host: the mirror needs a directory "
                               "of its own",
                               config->meta_mirror_dir);
    }
    return 0;
}

int sfs_config_validate(sfs_config_ctx_t *ctx)
{
    sfs_config_t *config = ctx->config;
    char          path[SFS_CONFIG_PATH_KEY_MAX], low[32], high[32], at[32];
    int           rc;

    for (uint32_t j = 0; j < config->host_count; j++) {
        for (uint32_t i = 0; i < j; i++) {
            if (sfs_config_host_matches(config->hosts[i].name, config->hosts[j].name)) {
                snprintf(path, sizeof(path), "hosts[%" PRIu32 "].name", j);
                return sfs_config_fail(ctx, config->hosts[j].line, path,
                                       "host '%s' is listed twice (as '%s'%s)",
                                       config->hosts[j].name, config->hosts[i].name,
                                       sfs_config_at_line(config->hosts[i].line, at, sizeof(at)));
            }
        }
    }
    if (!ctx->hosts_given) {
        rc = sfs_config_collect_hosts(ctx);
        if (rc != 0) {
            return rc;
        }
    }
    rc = sfs_config_check_role_host(ctx, "mgmt.host", config->mgmt_host,
                                    ctx->lines[SFS_CONFIG_LINE_MGMT_HOST]);
    if (rc != 0) {
        return rc;
    }
    rc = sfs_config_check_role_host(ctx, "meta.host", config->meta_host,
                                    ctx->lines[SFS_CONFIG_LINE_META_HOST]);
    if (rc != 0) {
        return rc;
    }
    rc = sfs_config_check_meta_mirror(ctx);
    if (rc != 0) {
        return rc;
    }
    for (uint32_t j = 0; j < config->target_count; j++) {
        const sfs_config_target_t      *target = &config->targets[j];
        const sfs_config_target_lines_t lines  = sfs_config_target_lines(ctx, j);

        snprintf(path, sizeof(path), "storage[%" PRIu32 "].host", j);
        rc = sfs_config_check_role_host(ctx, path, target->host, lines.host);
        if (rc != 0) {
            return rc;
        }
        for (uint32_t i = 0; i < j; i++) {
            const sfs_config_target_t      *other       = &config->targets[i];
            const sfs_config_target_lines_t other_lines = sfs_config_target_lines(ctx, i);

            if (other->id == target->id) {
                snprintf(path, sizeof(path), "storage[%" PRIu32 "].id", j);
                return sfs_config_fail(ctx, lines.id, path,
                                       "duplicate target id %" PRIu32 " (first%s)", target->id,
                                       sfs_config_at_line(other_lines.id, at, sizeof(at)));
            }
            if (strcmp(other->dir, target->dir) == 0 &&
                sfs_config_host_matches(other->host, target->host)) {
                snprintf(path, sizeof(path), "storage[%" PRIu32 "].dir", j);
                return sfs_config_fail(ctx, lines.dir, path,
                                       "%s on host %s is already the directory of target "
                                       "%" PRIu32 "%s",
                                       target->dir, target->host, other->id,
                                       sfs_config_at_line(other_lines.dir, at, sizeof(at)));
            }
        }
        if (config->meta_mirror_host[0] && strcmp(config->meta_mirror_dir, target->dir) == 0 &&
            sfs_config_host_matches(config->meta_mirror_host, target->host)) {
            return sfs_config_fail(ctx, ctx->lines[SFS_CONFIG_LINE_META_MIRROR_DIR],
                                   "meta.mirror_dir",
                                   "%s on host %s is also the directory of target %" PRIu32 "%s",
                                   config->meta_mirror_dir, config->meta_mirror_host, target->id,
                                   sfs_config_at_line(lines.dir, at, sizeof(at)));
        }
        if (strcmp(config->meta_dir, target->dir) == 0 &&
            sfs_config_host_matches(config->meta_host, target->host)) {
            return sfs_config_fail(ctx, ctx->lines[SFS_CONFIG_LINE_META_DIR], "meta.dir",
                                   "%s on host %s is also the directory of target %" PRIu32 "%s",
                                   config->meta_dir, config->meta_host, target->id,
                                   sfs_config_at_line(lines.dir, at, sizeof(at)));
        }
    }
    rc = sfs_config_mirror_validate(ctx);
    if (rc != 0) {
        return rc;
    }
    rc = sfs_config_pool_validate(ctx);
    if (rc != 0) {
        return rc;
    }
    if (config->offline_timeout_ms <= config->heartbeat_interval_ms) {
        return sfs_config_fail(
            ctx, ctx->lines[SFS_CONFIG_LINE_OFFLINE], "timeouts.offline",
            "%s must be longer than the heartbeat interval (%s)",
            sfs_config_duration_text(config->offline_timeout_ms, low, sizeof(low)),
            sfs_config_duration_text(config->heartbeat_interval_ms, high, sizeof(high)));
    }
    if (strcmp(config->security_mode, "munge") == 0) {
        config->munge = 1;
    } else if (strcmp(config->security_mode, "shared-secret") == 0) {
        config->munge = 0;
    } else {
        return sfs_config_fail(ctx, ctx->lines[SFS_CONFIG_LINE_SECURITY_MODE], "security.mode",
                               "'%s' is not a mode: use munge (users proven by MUNGE) or "
                               "shared-secret (trusted single-user: whoever holds the connauth "
                               "file is root on the file system)",
                               config->security_mode);
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* Hosts                                                               */

static int sfs_config_is_ipv4(const char *name)
{
    return name[strspn(name, "0123456789.")] == '\0';
}

int sfs_config_host_matches(const char *config_name, const char *hostname)
{
    const char *shorter, *longer;
    size_t      short_len;

    if (config_name == NULL || hostname == NULL || config_name[0] == '\0' || hostname[0] == '\0') {
        return 0;
    }
    if (strcasecmp(config_name, hostname) == 0) {
        return 1;
    }
    shorter = strlen(config_name) < strlen(hostname) ? config_name : hostname;
    longer  = shorter == config_name ? hostname : config_name;
    /* Only a short name matches a longer one, and never within an address. */
    if (strchr(shorter, '.') != NULL || sfs_config_is_ipv4(longer)) {
        return 0;
    }
    short_len = strlen(shorter);
    return strncasecmp(shorter, longer, short_len) == 0 && longer[short_len] == '.';
}

const sfs_config_host_t *sfs_config_find_host(const sfs_config_t *config, const char *hostname)
{
    const sfs_config_host_t *found = NULL;

    if (config == NULL || hostname == NULL) {
        return NULL;
    }
    for (uint32_t i = 0; i < config->host_count; i++) {
        if (strcasecmp(config->hosts[i].name, hostname) == 0) {
            return &config->hosts[i];
        }
    }
    for (uint32_t i = 0; i < config->host_count; i++) {
        if (!sfs_config_host_matches(config->hosts[i].name, hostname)) {
            continue;
        }
        if (found != NULL) {
            return NULL; /* ambiguous: a short name that matches two full names */
        }
        found = &config->hosts[i];
    }
    return found;
}
