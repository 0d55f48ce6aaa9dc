/*
 * Management's mirror state on disk (docs/mirroring.md, "Management
 * restarts"): which member serves each group now and both members'
 * consistency states, so that a management that restarts does not name the
 * config's primaries again (one whose copy may be stale). Written on every
 * change, atomically (a temporary file, fsync, rename, fsync of the
 * directory), and read back when management starts. The format is strict
 * text, one line per group, and anything else refuses the start with a
 * message naming the file and line:
 *
 *     stripefs mirror state 1
 *     group 1 members 101 102 primary 102 states needs-resync good
 *
 * (the states are the members', in the order of `members`, which must be
 * the config's). Resync progress is not kept: the members re-send it.
 */
#define SFS_LOG_FAC "mgmt"
#include "sfs_mgmt_internal.h"

#include "sfs_dirsync.h"
#include "sfs_errno.h"
#include "sfs_log.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SFS_MGMT_MIRROR_FILE "mirror-state"

int sfs_mgmt_state_path(const sfs_config_t *config, const char *name, char *path, size_t size)
{
    char dir[PATH_MAX];

    /* with the metadata store when management shares its host (the one-host
     * service, Imaging), else next to the config file */
    if (config->meta_dir[0] && strcmp(config->meta_host, config->mgmt_host) == 0) {
        snprintf(dir, sizeof(dir), "%s", config->meta_dir);
    } else if (config->path[0]) {
        char copy[PATH_MAX];

        snprintf(copy, sizeof(copy), "%s", config->path);
        snprintf(dir, sizeof(dir), "%s", dirname(copy));
    } else {
        return 0; /* a config from memory (unit tests): nothing kept */
    }
    if ((size_t)snprintf(path, size, "%s/%s", dir, name) >= size) {
        return sfs_error_set(-ENAMETOOLONG, "%s in %s: path too long", name, dir);
    }
    return 1;
}

int sfs_mgmt_mirror_state_path(const sfs_config_t *config, char *path, size_t size)
{
    return sfs_mgmt_state_path(config, SFS_MGMT_MIRROR_FILE, path, size);
}

int sfs_mgmt_state_write(const char *path, const char *buf, size_t len)
{
    char    tmp[PATH_MAX + 8];
    int     fd, rc = 0;
    ssize_t n;

    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        return sfs_error_set(-errno, "cannot create %s: %s", tmp, strerror(errno));
    }
    n = write(fd, buf, len);
    if (n != (ssize_t)len || fsync(fd) != 0) {
        rc = sfs_error_set(n < 0 || n == (ssize_t)len ? -errno : -EIO, "cannot write %s: %s", tmp,
                           n >= 0 && n != (ssize_t)len ? "short write" : strerror(errno));
    }
    if (close(fd) != 0 && rc == 0) {
        rc = sfs_error_set(-errno, "cannot close %s: %s", tmp, strerror(errno));
    }
    if (rc == 0 && rename(tmp, path) != 0) {
        rc = sfs_error_set(-errno, "cannot rename %s to %s: %s", tmp, path, strerror(errno));
    }
    if (rc) {
        (void)unlink(tmp);
        return rc;
    }
    rc = sfs_fsync_parent(path);
    if (rc) {
        rc = sfs_error_set(rc, "cannot sync the directory of %s: %s", path, strerror(-rc));
    }
    return rc;
}

void sfs_mgmt_mirror_save(sfs_mgmt_t *mgmt)
{
    const sfs_config_t *config = mgmt->service->config;
    char                path[PATH_MAX];
    char               *buf;
    size_t              size = 128 + (size_t)config->mirror_group_count * 128;
    int                 rc;

    if (!mgmt->mirrors || sfs_mgmt_mirror_state_path(config, path, sizeof(path)) <= 0) {
        return;
    }
    buf = malloc(size);
    if (!buf) {
        sfs_error("mirror state not saved to %s: out of memory", path);
        return;
    }
    rc = sfs_mgmt_mirror_format(config, mgmt->mirrors, buf, size);
    if (rc >= 0) {
        rc = sfs_mgmt_state_write(path, buf, (size_t)rc);
    }
    if (rc < 0) {
        /* the change holds in memory; a restart would not know it */
        sfs_error("mirror state not saved: %s", sfs_error_detail());
    }
    free(buf);
}

int sfs_mgmt_state_read(const char *path, char **text_p)
{
    char *text;
    FILE *f;
    long  len;
    int   rc = 0;

    *text_p = NULL;
    f       = fopen(path, "re");
    if (!f) {
        if (errno == ENOENT) {
            return 1;
        }
        return sfs_error_set(-errno, "cannot open %s: %s", path, strerror(errno));
    }
    if (fseek(f, 0, SEEK_END) != 0 || (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0 ||
        len > 1 << 20) {
        fclose(f);
        return sfs_error_set(-EBADMSG, "%s: cannot be read (or over 1 MiB)", path);
    }
    text = malloc((size_t)len + 1);
    if (!text) {
        fclose(f);
        return -ENOMEM;
    }
    if (fread(text, 1, (size_t)len, f) != (size_t)len) {
        rc = sfs_error_set(-EIO, "cannot read %s", path);
    } else {
        text[len] = '\0';
        if (strlen(text) != (size_t)len) {
            rc = sfs_error_set(-EBADMSG, "%s: holds a NUL byte", path);
        }
    }
    fclose(f);
    if (rc) {
        free(text);
        return rc;
    }
    *text_p = text;
    return 0;
}

int sfs_mgmt_mirror_load(sfs_mgmt_t *mgmt)
{
    const sfs_config_t *config = mgmt->service->config;
    sfs_mgmt_mirror_t  *groups;
    char                path[PATH_MAX];
    char               *text;
    int                 rc;

    if (!config->mirror_group_count) {
        return 0;
    }
    rc = sfs_mgmt_mirror_state_path(config, path, sizeof(path));
    if (rc <= 0) {
        return rc;
    }
    groups = sfs_mgmt_mirrors(mgmt);
    if (!groups) {
        return -ENOMEM;
    }
    rc = sfs_mgmt_state_read(path, &text);
    if (rc == 1) {
        return 0; /* never a change: the config's primaries, all good */
    }
    if (rc == 0) {
        rc = sfs_mgmt_mirror_parse(config, text, path, groups);
        free(text);
    }
    if (rc == 0) {
        for (uint32_t i = 0; i < config->mirror_group_count; i++) {
            if (groups[i].primary != groups[i].member[0] ||
                groups[i].state[0] != SFS_MIRROR_STATE_GOOD ||
                groups[i].state[1] != SFS_MIRROR_STATE_GOOD) {
                sfs_warn("mirror group %u (from %s): primary %u, %u %s, %u %s",
                         config->mirror_groups[i].id, path, groups[i].primary, groups[i].member[0],
                         sfs_mirror_state_name(groups[i].state[0]), groups[i].member[1],
                         sfs_mirror_state_name(groups[i].state[1]));
            }
        }
    }
    return rc;
}
