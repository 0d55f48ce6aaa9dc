#define SFS_LOG_FAC "munge"
#include "sfs_munged.h"

#include "sfs_auth.h"
#include "sfs_errno.h"
#include "sfs_log.h"
#include "sfs_munge.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define SFS_MUNGED_BIN "/usr/sbin/munged"

int sfs_munged_make_key(const char *key_path)
{
    char  dir[PATH_MAX];
    char *slash;

    if (access(key_path, F_OK) == 0) {
        return 0;
    }
    snprintf(dir, sizeof(dir), "%s", key_path);
    slash = strrchr(dir, '/');
    if (slash && slash != dir) {
        *slash = '\0';
        /* munged wants its directories writable only by their owner */
        if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
            return sfs_error_set(-errno, "cannot create %s: %s", dir, strerror(errno));
        }
    }
    return sfs_auth_make_connauth(key_path, 1024);
}

/* 1 if a munged answers on the socket. */
static int sfs_munged_alive(const char *socket)
{
    char *cred = NULL;
    int   rc   = sfs_munge_encode(socket, "", 0, &cred);

    free(cred);
    sfs_error_clear();
    return rc == 0;
}

/* The last "Error:" line munged wrote to its log ("" if none), so that a
 * failed start says why without sending the administrator to the file. */
static void sfs_munged_last_error(const char *log_path, char *why, size_t size)
{
    char  line[512];
    FILE *log = fopen(log_path, "r");

    why[0] = '\0';
    if (!log) {
        return;
    }
    while (fgets(line, sizeof(line), log)) {
        const char *error = strstr(line, "Error: ");

        if (error) {
            snprintf(why, size, "%s", error + strlen("Error: "));
            why[strcspn(why, "\n")] = '\0';
        }
    }
    fclose(log);
}

int sfs_munged_start(const sfs_config_t *config, pid_t *pid_p)
{
    char  dir[PATH_MAX], log[PATH_MAX + 32], pid_file[PATH_MAX + 32], seed[PATH_MAX + 32];
    char  socket_arg[PATH_MAX + 16], key_arg[PATH_MAX + 16], log_path[PATH_MAX + 16];
    char *argv[9];
    char *slash;
    posix_spawn_file_actions_t actions;
    pid_t                      pid;
    int                        rc;

    *pid_p = 0;
    if (sfs_munged_alive(config->munge_socket)) {
        sfs_info("using the munged already listening on %s", config->munge_socket);
        return 0;
    }
    if (access(SFS_MUNGED_BIN, X_OK) != 0) {
        return sfs_error_set(-ENOENT,
                             "%s is not installed (Debian package munge): it proves "
                             "users' identities to the servers",
                             SFS_MUNGED_BIN);
    }
    rc = sfs_munged_make_key(config->munged_key);
    if (rc) {
        return rc;
    }
    snprintf(dir, sizeof(dir), "%s", config->munge_socket);
    slash = strrchr(dir, '/');
    if (slash && slash != dir) {
        *slash = '\0';
    }
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
        return sfs_error_set(-errno, "cannot create %s: %s", dir, strerror(errno));
    }
    unlink(config->munge_socket); /* a dead munged's socket */
    snprintf(socket_arg, sizeof(socket_arg), "--socket=%s", config->munge_socket);
    snprintf(key_arg, sizeof(key_arg), "--key-file=%s", config->munged_key);
    snprintf(log, sizeof(log), "--log-file=%s/munged.log", dir);
    snprintf(log_path, sizeof(log_path), "%s/munged.log", dir);
    snprintf(pid_file, sizeof(pid_file), "--pid-file=%s/munged.pid", dir);
    snprintf(seed, sizeof(seed), "--seed-file=%s/munged.seed", dir);
    argv[0] = "munged";
    argv[1] = "--foreground";
    argv[2] = socket_arg;
    argv[3] = key_arg;
    argv[4] = log;
    argv[5] = pid_file;
    argv[6] = seed;
    argv[7] = NULL;
    /* in the foreground it writes its messages to stderr: to its log file,
     * not into the service's output */
    rc = posix_spawn_file_actions_init(&actions);
    if (rc == 0) {
        posix_spawn_file_actions_addopen(&actions, 1, log_path, O_WRONLY | O_CREAT | O_APPEND,
                                         0600);
        posix_spawn_file_actions_adddup2(&actions, 1, 2);
        rc = posix_spawn(&pid, SFS_MUNGED_BIN, &actions, NULL, argv, environ);
        posix_spawn_file_actions_destroy(&actions);
    }
    if (rc != 0) {
        return sfs_error_set(-rc, "cannot start %s: %s", SFS_MUNGED_BIN, strerror(rc));
    }
    for (int i = 0; i < 200; i++) { /* 10 s */
        int status;

        if (sfs_munged_alive(config->munge_socket)) {
            sfs_info("munged started (pid %d) on %s with key %s", (int)pid, config->munge_socket,
                     config->munged_key);
            *pid_p = pid;
            return 0;
        }
        if (waitpid(pid, &status, WNOHANG) == pid) {
            char why[512];

            sfs_munged_last_error(log_path, why, sizeof(why));
            return sfs_error_set(-EIO, "munged exited at start (exit %d)%s%s: see %s/munged.log",
                                 WIFEXITED(status) ? WEXITSTATUS(status) : -1, why[0] ? ": " : "",
                                 why, dir);
        }
        nanosleep(&(struct timespec){0, 50 * 1000 * 1000}, NULL);
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    return sfs_error_set(-ETIMEDOUT, "munged did not answer on %s in 10 s", config->munge_socket);
}

void sfs_munged_adopt(const sfs_config_t *config, pid_t *pid_p)
{
    char  path[PATH_MAX + 32], *slash;
    long  pid = 0;
    FILE *file;

    *pid_p = 0;
    if (!config->munge || !config->munged_key[0] || !sfs_munged_alive(config->munge_socket)) {
        return;
    }
    snprintf(path, sizeof(path), "%s", config->munge_socket);
    slash = strrchr(path, '/');
    if (!slash) {
        return;
    }
    snprintf(slash, sizeof(path) - (size_t)(slash - path), "/munged.pid");
    file = fopen(path, "r");
    if (!file) {
        return;
    }
    if (fscanf(file, "%ld", &pid) != 1 || pid <= 1 || kill((pid_t)pid, 0) != 0) {
        pid = 0;
    }
    fclose(file);
    if (pid) {
        /* the pid of a munged that died may have been reused: stop only a
         * munged on this socket */
        char   cmdline[PATH_MAX + 256] = "", want[PATH_MAX + 16];
        FILE  *proc;
        size_t n = 0;

        snprintf(path, sizeof(path), "/proc/%ld/cmdline", pid);
        proc = fopen(path, "r");
        if (proc) {
            n = fread(cmdline, 1, sizeof(cmdline) - 1, proc);
            fclose(proc);
        }
        for (size_t i = 0; i < n; i++) {
            cmdline[i] = cmdline[i] ? cmdline[i] : ' ';
        }
        cmdline[n] = '\0';
        snprintf(want, sizeof(want), "--socket=%s", config->munge_socket);
        if (strstr(cmdline, "munged") && strstr(cmdline, want)) {
            *pid_p = (pid_t)pid;
            sfs_info("took over the service's munged (pid %ld) on %s", pid, config->munge_socket);
        }
    }
}

void sfs_munged_stop(pid_t pid)
{
    if (pid <= 0) {
        return;
    }
    kill(pid, SIGTERM);
    for (int i = 0; i < 100; i++) {
        pid_t done = waitpid(pid, NULL, WNOHANG);

        /* one taken over is not our child: it is gone when kill finds none */
        if (done == pid || (done < 0 && errno == ECHILD && kill(pid, 0) != 0)) {
            return;
        }
        nanosleep(&(struct timespec){0, 50 * 1000 * 1000}, NULL);
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}
