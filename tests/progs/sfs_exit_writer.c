/*
 * Exits with stripefs files open, for tests/preload/test_preload_exit.sh
 * (run through libstripefs-posix.so). DIR is a stripefs directory.
 *
 *   sfs_exit_writer atexit DIR   an atexit handler registered before the
 *       preload's first call opens DIR/before and writes "before" with stdio;
 *       main writes "fd" to DIR/fd with write(2) and "main" to a stdio stream
 *       on DIR/after, and registers a handler that writes "after" to it; then
 *       returns 0. Nothing is closed and no stream is flushed: exit must.
 *   sfs_exit_writer sigterm-exit DIR     "fd" to DIR/fd, "term" to a stdio
 *       stream on DIR/after (not flushed), then raise(SIGTERM), whose handler
 *       calls exit(0): the stream must be flushed
 *   sfs_exit_writer sigterm-default DIR  the same, SIGTERM's default action:
 *       the process dies, DIR/fd keeps "fd", the stream's buffer is lost
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char  before_path[4096], after_path[4096], fd_path[4096];
static FILE *after_stream;

static void say(FILE *f, const char *what, const char *path)
{
    if (!f || fprintf(f, "%s\n", what) < 0) {
        fprintf(stderr, "sfs_exit_writer: %s: cannot write %s\n", what, path);
        _exit(3); /* at exit: the only way to say it */
    }
}

static void atexit_before(void)
{
    say(fopen(before_path, "w"), "before", before_path);
}

static void atexit_after(void)
{
    say(after_stream, "after", after_path);
}

static void on_sigterm(int sig)
{
    (void)sig;
    exit(0);
}

int main(int argc, char **argv)
{
    const char *mode;
    int         fd;

    if (argc != 3) {
        fprintf(stderr, "usage: %s atexit|sigterm-exit|sigterm-default DIR\n", argv[0]);
        return 2;
    }
    mode = argv[1];
    snprintf(before_path, sizeof(before_path), "%s/before", argv[2]);
    snprintf(after_path, sizeof(after_path), "%s/after", argv[2]);
    snprintf(fd_path, sizeof(fd_path), "%s/fd", argv[2]);
    alarm(60);
    if (strcmp(mode, "atexit") == 0 && atexit(atexit_before) != 0) {
        return 1;
    }
    fd = open(fd_path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
    if (fd < 0 || write(fd, "fd\n", 3) != 3) {
        perror(fd_path);
        return 1;
    }
    after_stream = fopen(after_path, "w");
    say(after_stream, strcmp(mode, "atexit") == 0 ? "main" : "term", after_path);
    if (strcmp(mode, "atexit") == 0) {
        return atexit(atexit_after) != 0;
    }
    if (strcmp(mode, "sigterm-exit") == 0) {
        signal(SIGTERM, on_sigterm);
    } else if (strcmp(mode, "sigterm-default") != 0) {
        fprintf(stderr, "sfs_exit_writer: unknown mode %s\n", mode);
        return 2;
    }
    raise(SIGTERM);
    return 1; /* not reached */
}
