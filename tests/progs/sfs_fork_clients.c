/*
 * A process with a live stripefs connection forks children that each make
 * one stripefs call and exit (plain libc calls: run it under
 * LD_PRELOAD=libstripefs-posix.so). Each child reconnects on its own (the
 * preload forgets the parent's client in the child); nothing the children do
 * may hang them or hurt the service.
 *
 *   sfs_fork_clients PATH COUNT     stat PATH in the parent, then COUNT times:
 *                                   fork, stat PATH in the child (20 s at most)
 *
 * Prints "COUNT forks: H hung, F failed" and exits 1 if any child hung or
 * failed, 2 on a usage error or if the parent's own stat fails.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    struct stat st;
    int         count, hung = 0, failed = 0;

    if (argc != 3 || (count = atoi(argv[2])) <= 0) {
        fprintf(stderr, "usage: sfs_fork_clients PATH COUNT\n");
        return 2;
    }
    if (stat(argv[1], &st) != 0) {
        perror("sfs_fork_clients: stat in the parent");
        return 2;
    }
    for (int i = 0; i < count; i++) {
        pid_t pid;
        int   status;

        fflush(stdout);
        pid = fork();
        if (pid < 0) {
            perror("sfs_fork_clients: fork");
            return 2;
        }
        if (pid == 0) {
            alarm(20);
            _exit(stat(argv[1], &st) == 0 ? 0 : 1);
        }
        if (waitpid(pid, &status, 0) != pid) {
            perror("sfs_fork_clients: waitpid");
            return 2;
        }
        if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM) {
            hung++;
            fprintf(stderr, "fork %d: the child hung (killed after 20 s)\n", i + 1);
        } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            failed++;
            if (failed <= 5) {
                fprintf(stderr, "fork %d: the child's stat failed\n", i + 1);
            }
        }
        if (stat(argv[1], &st) != 0 && failed <= 5) { /* the parent keeps using its client */
            perror("sfs_fork_clients: stat in the parent");
        }
    }
    printf("%d forks: %d hung, %d failed\n", count, hung, failed);
    return hung || failed ? 1 : 0;
}
