/* Shared by the parts of sfs_perm_probe (see sfs_perm_probe.c for what it
 * does): the tree's kinds of entries, the path helpers, and the two halves,
 * setup (sfs_perm_probe_setup.c, as root) and probe (sfs_perm_probe_ops.c,
 * as the user under test). */
#ifndef SFS_PERM_PROBE_H
#define SFS_PERM_PROBE_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#define CONTENT      "0123456789\n"
#define EXPLICIT_SEC 1000000000L

/* who owns a node: alice, bob or root; groups: alice's, bob's, team, root */
enum { WHO_ALICE, WHO_BOB, WHO_ROOT };
enum { GRP_ALICE, GRP_BOB, GRP_TEAM, GRP_ROOT };

typedef struct node_kind {
    const char *name;
    int         owner, group;
    mode_t      mode;
} node_kind_t;

typedef struct entry_kind {
    const char *name;
    int         is_dir, owner, group;
    mode_t      mode;
} entry_kind_t;

extern const node_kind_t  files[];
extern const size_t       files_count;
extern const char *const  file_copies[];
extern const size_t       file_copies_count;
extern const node_kind_t  sgid_files[];
extern const size_t       sgid_files_count;
extern const node_kind_t  setid_chown_files[];
extern const size_t       setid_chown_files_count;
extern const node_kind_t  setid_write_files[];
extern const size_t       setid_write_files_count;
extern const node_kind_t  dirs[];
extern const size_t       dirs_count;
extern const entry_kind_t dir_entries[];
extern const size_t       dir_entries_count;
extern const entry_kind_t nested[];
extern const size_t       nested_count;

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

extern const char *base;      /* DIR */
extern int         as_owners; /* setup --as-owners */

const char *errname(int err);
char *path_of(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* setup DIR [ALICE_UID BOB_UID TEAM_GID]: build the tree; 0, or 1 when a step failed */
int do_setup(int argc, char **argv);
/* probe DIR: run the matrix as the caller */
int do_probe(void);

#endif
