/*
 * sfs_powercut_load: the power-cut test's workload and its checker, plain
 * POSIX calls (run through libstripefs-posix.so on /stripefs paths).
 *
 *   sfs_powercut_load run DIR JOURNAL ITERATIONS [--nosync]
 *   sfs_powercut_load check DIR JOURNAL
 *
 * run: iteration i makes DIR/d<i> (step 0), writes and fsyncs DIR/d<i>/f
 * (1) and DIR/d<i>/t (2), renames t to r (3), creates the empty file u (4)
 * and, for an even i, unlinks DIR/d<i-1>/u (5). After each step that succeeded its number
 * goes to JOURNAL (a local file, written with write(2): it survives the
 * process being killed). --nosync leaves out the fsyncs (the negative
 * control: the writes are acknowledged but not durable). The first failing
 * step ends the run (exit 1).
 * check: every step the journal acknowledges must be visible in DIR; the
 * step after the last one may or may not have happened. Prints what was
 * acknowledged and what was found; exit 0 when nothing is missing, 1 when
 * something is, 2 on usage or setup errors.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PC_STEPS 6

static uint8_t pc_byte(long i, int s, size_t j)
{
    return (uint8_t)((i * 131 + s * 17 + (long)j * 7 + (long)(j >> 8)) ^ 0x5a);
}

/* Some files span several chunks, most are small. */
static size_t pc_size(long i, int s)
{
    return 1000 + (size_t)(i % 7) * 9000 + (size_t)s * 11 + (i % 16 == 5 ? 700000 : 0);
}

static int pc_write_file(const char *path, long i, int s, int sync)
{
    size_t   size = pc_size(i, s);
    uint8_t *buf  = malloc(size);
    int      fd, rc = 0;

    if (!buf) {
        return -ENOMEM;
    }
    for (size_t j = 0; j < size; j++) {
        buf[j] = pc_byte(i, s, j);
    }
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (fd < 0) {
        free(buf);
        return -errno;
    }
    if (write(fd, buf, size) != (ssize_t)size || (sync && fsync(fd) != 0)) {
        rc = errno ? -errno : -EIO;
    }
    if (close(fd) != 0 && rc == 0) {
        rc = -errno;
    }
    free(buf);
    return rc;
}

static int pc_step(const char *dir, long i, int s, int sync)
{
    char a[4096], b[4096];
    int  fd;

    switch (s) {
    case 0:
        snprintf(a, sizeof(a), "%s/d%ld", dir, i);
        return mkdir(a, 0755) != 0 ? -errno : 0;
    case 1:
    case 2:
        snprintf(a, sizeof(a), "%s/d%ld/%s", dir, i, s == 1 ? "f" : "t");
        return pc_write_file(a, i, s, sync);
    case 3:
        snprintf(a, sizeof(a), "%s/d%ld/t", dir, i);
        snprintf(b, sizeof(b), "%s/d%ld/r", dir, i);
        return rename(a, b) != 0 ? -errno : 0;
    case 4:
        snprintf(a, sizeof(a), "%s/d%ld/u", dir, i);
        fd = open(a, O_WRONLY | O_CREAT | O_EXCL, 0644);
        if (fd < 0) {
            return -errno;
        }
        return close(fd) != 0 ? -errno : 0;
    default:
        if (i % 2 == 1 || i == 0) {
            return 0;
        }
        snprintf(a, sizeof(a), "%s/d%ld/u", dir, i - 1);
        return unlink(a) != 0 ? -errno : 0;
    }
}

static int pc_run(const char *dir, const char *journal, long iterations, int sync)
{
    char line[32];
    int  jfd = open(journal, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);

    if (jfd < 0) {
        fprintf(stderr, "sfs_powercut_load: cannot open journal %s: %m\n", journal);
        return 2;
    }
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "sfs_powercut_load: mkdir %s: %m\n", dir);
        return 1;
    }
    for (long k = 0; k < iterations * PC_STEPS; k++) {
        int rc = pc_step(dir, k / PC_STEPS, (int)(k % PC_STEPS), sync);
        int n;

        if (rc) {
            fprintf(stderr, "sfs_powercut_load: step %ld (d%ld, step %ld) failed: %s\n", k,
                    k / PC_STEPS, k % PC_STEPS, strerror(-rc));
            close(jfd);
            return 1;
        }
        n = snprintf(line, sizeof(line), "%ld\n", k);
        if (write(jfd, line, (size_t)n) != n) {
            fprintf(stderr, "sfs_powercut_load: journal %s: %m\n", journal);
            close(jfd);
            return 2;
        }
    }
    close(jfd);
    return 0;
}

/* 1: the file holds exactly the bytes of (i, s); 0: absent; -1: other. */
static int pc_file_state(const char *path, long i, int s)
{
    size_t   size = pc_size(i, s);
    uint8_t *buf;
    ssize_t  got;
    int      fd = open(path, O_RDONLY), ok;

    if (fd < 0) {
        return errno == ENOENT ? 0 : -1;
    }
    buf = malloc(size + 1);
    if (!buf) {
        close(fd);
        return -1;
    }
    got = 0;
    for (ssize_t n; (size_t)got < size + 1; got += n) {
        n = read(fd, buf + got, size + 1 - (size_t)got);
        if (n <= 0) {
            break;
        }
    }
    close(fd);
    ok = (size_t)got == size;
    for (size_t j = 0; ok && j < size; j++) {
        ok = buf[j] == pc_byte(i, s, j);
    }
    free(buf);
    return ok ? 1 : -1;
}

static int pc_exists(const char *path)
{
    struct stat st;

    return stat(path, &st) == 0;
}

typedef struct {
    const char *what;
    long        acked, found;
} pc_count_t;

static void pc_expect(pc_count_t *c, int ok, const char *fmt, const char *path)
{
    c->acked++;
    if (ok) {
        c->found++;
    } else {
        printf("lost: %s %s\n", fmt, path);
    }
}

static int pc_check(const char *dir, const char *journal)
{
    pc_count_t dirs = {"mkdir"}, files = {"synced file"}, renames = {"rename"},
               creates = {"create"}, unlinks = {"unlink"};
    long  done = 0, k, bytes = 0, bytes_found = 0;
    char  line[32], p[4096], q[4096];
    FILE *j = fopen(journal, "r");

    if (!j) {
        fprintf(stderr, "sfs_powercut_load: cannot open journal %s: %m\n", journal);
        return 2;
    }
    while (fgets(line, sizeof(line), j)) {
        k = strtol(line, NULL, 10);
        if (k != done) {
            fprintf(stderr, "sfs_powercut_load: journal %s: step %ld after %ld\n", journal, k,
                    done);
            fclose(j);
            return 2;
        }
        done++;
    }
    fclose(j);
    /* step done (the first not acknowledged) may or may not have happened */
    for (long i = 0; i * PC_STEPS < done; i++) {
        long base = i * PC_STEPS;

        snprintf(p, sizeof(p), "%s/d%ld", dir, i);
        pc_expect(&dirs, pc_exists(p), "directory", p);
        if (base + 1 < done) {
            snprintf(p, sizeof(p), "%s/d%ld/f", dir, i);
            int st = pc_file_state(p, i, 1);
            bytes += (long)pc_size(i, 1);
            bytes_found += st == 1 ? (long)pc_size(i, 1) : 0;
            pc_expect(&files, st == 1, st == 0 ? "file (absent)" : "file (other bytes)", p);
        }
        snprintf(p, sizeof(p), "%s/d%ld/t", dir, i);
        snprintf(q, sizeof(q), "%s/d%ld/r", dir, i);
        if (base + 2 < done) {
            int t = pc_file_state(p, i, 2), r = pc_file_state(q, i, 2);
            int moved = base + 3 < done, maybe = base + 3 == done;
            int ok = moved ? r == 1 : maybe ? (r == 1 || t == 1) : t == 1;

            bytes += (long)pc_size(i, 2);
            bytes_found += ok ? (long)pc_size(i, 2) : 0;
            pc_expect(&files, ok, moved ? "file" : "file (before its rename)", moved ? q : p);
            if (moved) {
                pc_expect(&renames, !pc_exists(p) && pc_exists(q),
                          "rename (old name still there or new one absent)", q);
            }
        }
        /* u of an odd iteration is unlinked by the next one, an even one's stays */
        snprintf(p, sizeof(p), "%s/d%ld/u", dir, i);
        snprintf(q, sizeof(q), "%s/d%ld", dir, i);
        long unlinked = i % 2 ? (i + 1) * PC_STEPS + 5 : -1;
        if (unlinked >= 0 && unlinked < done) {
            pc_expect(&unlinks, pc_exists(q) && !pc_exists(p), "unlink (or its directory lost)", p);
        } else if (base + 4 < done && unlinked != done) {
            pc_expect(&creates, pc_exists(p), "created file", p);
        }
    }
    pc_count_t *all[] = {&dirs, &files, &renames, &creates, &unlinks};
    long        acked = 0, found = 0;

    for (size_t n = 0; n < sizeof(all) / sizeof(all[0]); n++) {
        printf("%-12s acknowledged %6ld, found after the cut %6ld\n", all[n]->what, all[n]->acked,
               all[n]->found);
        acked += all[n]->acked;
        found += all[n]->found;
    }
    printf("synced bytes acknowledged %ld, found %ld\n", bytes, bytes_found);
    printf("steps acknowledged %ld; checks %ld, passed %ld, lost %ld\n", done, acked, found,
           acked - found);
    return acked == found ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc >= 5 && strcmp(argv[1], "run") == 0) {
        int sync = !(argc >= 6 && strcmp(argv[5], "--nosync") == 0);

        return pc_run(argv[2], argv[3], strtol(argv[4], NULL, 10), sync);
    }
    if (argc == 4 && strcmp(argv[1], "check") == 0) {
        return pc_check(argv[2], argv[3]);
    }
    fprintf(stderr, "usage: %s run DIR JOURNAL ITERATIONS [--nosync] | check DIR JOURNAL\n",
            argv[0]);
    return 2;
}
