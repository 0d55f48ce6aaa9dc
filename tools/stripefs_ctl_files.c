/* stripefs-ctl verbs for files and setup: put, get, mkconnauth, genconfig,
 * hosts-of. */
#include "stripefs_ctl.h"

#include "sfs_auth.h"
#include "sfs_config.h"
#include "sfs_errno.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int ctl_put(ctl_t *ctl, int argc, char **argv)
{
    sfs_file_t *file;
    char       *buf;
    uint64_t    offset = 0;
    int         fd, rc = 0, closed;

    if (argc != 3) {
        fprintf(stderr, "usage: stripefs-ctl put LOCAL_FILE STRIPEFS_PATH\n");
        return EXIT_USAGE;
    }
    fd = strcmp(argv[1], "-") == 0 ? 0 : open(argv[1], O_RDONLY);
    if (fd < 0) {
        fprintf(stderr, "stripefs-ctl put: cannot open %s: %s\n", argv[1], strerror(errno));
        return 1;
    }
    rc = sfs_file_open(ctl->client, argv[2], SFS_O_WRONLY | SFS_O_CREAT | SFS_O_TRUNC, 0644, NULL,
                       &file);
    if (rc) {
        close(fd);
        return ctl_fail("put", rc);
    }
    buf = malloc(16u << 20);
    while (buf && rc == 0) {
        ssize_t got = read(fd, buf, 16u << 20);
        ssize_t put;

        if (got <= 0) {
            rc = got < 0 ? -errno : 0;
            break;
        }
        put = sfs_file_pwrite(file, buf, (size_t)got, offset);
        if (put < 0) {
            rc = (int)put;
        }
        offset += (uint64_t)got;
    }
    free(buf);
    close(fd);
    closed = sfs_file_close(file); /* (a write still in flight may fail here) */
    if (rc == 0) {
        rc = closed;
    }
    return rc ? ctl_fail("put", rc) : 0;
}

int ctl_get(ctl_t *ctl, int argc, char **argv)
{
    sfs_file_t *file;
    char       *buf;
    uint64_t    offset = 0;
    int         fd, rc;

    if (argc != 3) {
        fprintf(stderr, "usage: stripefs-ctl get STRIPEFS_PATH LOCAL_FILE|-\n");
        return EXIT_USAGE;
    }
    rc = sfs_file_open(ctl->client, argv[1], SFS_O_RDONLY, 0, NULL, &file);
    if (rc) {
        return ctl_fail("get", rc);
    }
    fd = strcmp(argv[2], "-") == 0 ? 1 : open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        fprintf(stderr, "stripefs-ctl get: cannot create %s: %s\n", argv[2], strerror(errno));
        sfs_file_close(file);
        return 1;
    }
    buf = malloc(16u << 20);
    while (buf) {
        ssize_t got = sfs_file_pread(file, buf, 16u << 20, offset);

        if (got <= 0) {
            rc = (int)got;
            break;
        }
        if (write(fd, buf, (size_t)got) != got) {
            rc = -errno;
            break;
        }
        offset += (uint64_t)got;
    }
    free(buf);
    if (fd != 1) {
        close(fd);
    }
    sfs_file_close(file);
    return rc ? ctl_fail("get", rc) : 0;
}

int ctl_mkconnauth(ctl_t *ctl, int argc, char **argv)
{
    long size = SFS_CONNAUTH_DEFAULT_SIZE;
    int  opt, rc;

    (void)ctl;
    optind = 1;
    while ((opt = getopt(argc, argv, "s:")) != -1) {
        if (opt == 's') {
            char *end;

            errno = 0;
            size  = strtol(optarg, &end, 10);
            if (end == optarg || *end || errno) {
                fprintf(stderr, "stripefs-ctl mkconnauth: -s %s is not a number of bytes\n",
                        optarg);
                return EXIT_USAGE;
            }
        } else {
            return EXIT_USAGE;
        }
    }
    if (optind != argc - 1) {
        fprintf(stderr, "usage: stripefs-ctl mkconnauth [-s BYTES] FILE\n");
        return EXIT_USAGE;
    }
    rc = sfs_auth_make_connauth(argv[optind], (size_t)size);
    if (rc) {
        return ctl_fail("mkconnauth", rc);
    }
    printf("wrote %ld random bytes to %s (mode 0400); copy it to every server host\n", size,
           argv[optind]);
    return 0;
}

/* A config to stdout. sfs_config_write() replaces its path by a rename, so
 * it must never be given /dev/stdout (as root that replaces the device
 * link): write a temporary file and copy it out. */
static int ctl_config_print(const sfs_config_t *config)
{
    char    path[] = "/tmp/stripefs-genconfig.XXXXXX", buf[4096];
    ssize_t got;
    int     fd, rc;

    fd = mkstemp(path);
    if (fd < 0) {
        return sfs_error_set(-errno, "cannot create %s: %s", path, strerror(errno));
    }
    close(fd);
    rc = sfs_config_write(config, path);
    fd = rc ? -1 : open(path, O_RDONLY);
    if (rc == 0 && fd < 0) {
        rc = sfs_error_set(-errno, "cannot read %s back: %s", path, strerror(errno));
    }
    while (fd >= 0 && (got = read(fd, buf, sizeof(buf))) > 0) {
        if (fwrite(buf, 1, (size_t)got, stdout) != (size_t)got) {
            rc = sfs_error_set(-EIO, "cannot write the config to stdout");
            break;
        }
    }
    if (fd >= 0) {
        close(fd);
    }
    unlink(path);
    if (rc == 0 && fflush(stdout) != 0) {
        rc = sfs_error_set(-errno, "cannot write the config to stdout: %s", strerror(errno));
    }
    return rc;
}

int ctl_genconfig(ctl_t *ctl, int argc, char **argv)
{
    static const struct option options[]    = {{"hosts", required_argument, NULL, 'H'},
                                               {"storage-dir", required_argument, NULL, 's'},
                                               {"meta-dir", required_argument, NULL, 'm'},
                                               {"connauth", required_argument, NULL, 'a'},
                                               {"port", required_argument, NULL, 'p'},
                                               {"output", required_argument, NULL, 'o'},
                                               {"munge-socket", required_argument, NULL, 'S'},
                                               {"munged-key", required_argument, NULL, 'K'},
                                               {"admin-group", required_argument, NULL, 'G'},
                                               {"shared-secret", no_argument, NULL, 'X'},
                                               {NULL, 0, NULL, 0}};
    const char                *munge_socket = NULL, *munged_key = NULL, *admin_group = NULL;
    int                        shared_secret = 0;
    const char                *hosts = NULL, *storage = "/var/lib/stripefs/storage";
    const char   *meta = "/var/lib/stripefs/meta", *connauth = "/etc/stripefs/connauth";
    const char   *output = NULL;
    const char   *list[256];
    uint32_t      count = 0;
    long          port  = SFS_CONFIG_DEFAULT_PORT;
    char         *copy, *save = NULL;
    sfs_config_t *config;
    int           opt, rc;

    (void)ctl;
    optind = 1;
    while ((opt = getopt_long(argc, argv, "o:", options, NULL)) != -1) {
        switch (opt) {
        case 'H':
            hosts = optarg;
            break;
        case 's':
            storage = optarg;
            break;
        case 'm':
            meta = optarg;
            break;
        case 'a':
            connauth = optarg;
            break;
        case 'p': {
            char *end;

            port = strtol(optarg, &end, 10);
            if (end == optarg || *end) {
                port = -1; /* a usage error below */
            }
            break;
        }
        case 'o':
            output = optarg;
            break;
        case 'S':
            munge_socket = optarg;
            break;
        case 'K':
            munged_key = optarg;
            break;
        case 'G':
            admin_group = optarg;
            break;
        case 'X':
            shared_secret = 1;
            break;
        default:
            return EXIT_USAGE;
        }
    }
    if (!hosts || optind != argc || port < 1 || port > 65535) {
        fprintf(stderr, "usage: stripefs-ctl genconfig --hosts H1,H2,... [--storage-dir DIR] "
                        "[--meta-dir DIR] [--connauth FILE] [--port N] [--munge-socket PATH] "
                        "[--munged-key PATH] [--admin-group GROUP] [--shared-secret] "
                        "[-o FILE]\n");
        return EXIT_USAGE;
    }
    copy = strdup(hosts);
    for (char *h = strtok_r(copy, ",", &save); h && count < 256; h = strtok_r(NULL, ",", &save)) {
        list[count++] = h;
    }
    rc = sfs_config_generate(list, count, storage, meta, connauth, (uint16_t)port, &config);
    if (rc == 0) {
        if ((munge_socket && strlen(munge_socket) >= sizeof(config->munge_socket)) ||
            (munged_key && strlen(munged_key) >= sizeof(config->munged_key)) ||
            (admin_group && strlen(admin_group) >= sizeof(config->admin_group))) {
            sfs_config_destroy(config);
            fprintf(stderr, "stripefs-ctl genconfig: a path or group name is too long\n");
            free(copy);
            return EXIT_USAGE;
        }
        if (munge_socket) {
            snprintf(config->munge_socket, sizeof(config->munge_socket), "%s", munge_socket);
        }
        if (munged_key) {
            snprintf(config->munged_key, sizeof(config->munged_key), "%s", munged_key);
        }
        if (admin_group) {
            snprintf(config->admin_group, sizeof(config->admin_group), "%s", admin_group);
        }
        if (shared_secret) {
            snprintf(config->security_mode, sizeof(config->security_mode), "shared-secret");
            config->munge = 0;
        }
        rc = output ? sfs_config_write(config, output) : ctl_config_print(config);
        sfs_config_destroy(config);
    }
    free(copy);
    return rc ? ctl_fail("genconfig", rc) : 0;
}

int ctl_hosts_of(ctl_t *ctl, int argc, char **argv)
{
    sfs_config_t *config;
    int           rc;

    (void)ctl;
    if (argc != 2) {
        fprintf(stderr, "usage: stripefs-ctl hosts-of CLUSTER.yaml\n");
        return EXIT_USAGE;
    }
    rc = sfs_config_load(argv[1], &config);
    if (rc) {
        return ctl_fail("hosts-of", rc);
    }
    for (uint32_t h = 0; h < config->host_count; h++) {
        printf("%s:%u\n", config->hosts[h].name, config->hosts[h].ranks);
    }
    sfs_config_destroy(config);
    return 0;
}
