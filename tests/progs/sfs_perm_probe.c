/*
 * A fixed permission matrix, answered by whatever file system holds DIR.
 * The program calls plain libc only: under LD_PRELOAD=libstripefs-posix.so
 * a /stripefs/... DIR is served by the service, otherwise by the kernel, so
 * the same run on a local ext4 directory is the oracle.
 *
 *   sfs_perm_probe setup [--as-owners] DIR [ALICE_UID BOB_UID TEAM_GID]   as root
 *   sfs_perm_probe probe DIR                               as the user under test
 *
 * setup builds the tree below (DIR is made if missing; it should be empty):
 * files of every interesting mode in f/ (one copy per operation that changes
 * them), directories of every interesting mode (sticky, read-only, setgid,
 * search-only, group-writable) each holding files and directories of alice
 * and of bob, nested directories where an ancestor lacks search permission.
 * Owners: alice, bob (uids given, default: the users sfsalice and sfsbob),
 * root; groups: alice's and bob's primary groups, the team group (default
 * sfsteam), root. It creates everything first, then chowns and chmods
 * bottom-up. With --as-owners, each entry is made and chmodded by its owner
 * instead (child processes with the owner's ids), so that only the two files
 * whose group their owner is not in need root's chown. Every entry is then
 * checked with stat. Errors are printed ("setup: chown PATH: EPERM") and
 * setup goes on; it exits 1 if any step failed.
 *
 * probe runs a fixed list of operations and prints one line each,
 * "OPERATION RELATIVE-PATH [DETAIL]: OK [details]" or ": ERRNO-NAME", with
 * owners and groups in a form that does not depend on uids ("owner=self",
 * "group=primary", "group=team", else the name), so that the output is the
 * same for the same user on two file systems that behave the same. Every
 * operation that changes something has its own object, so each answer is
 * independent of the others. The first line is the umask the caller set
 * (created files and directories are reported with their resulting modes).
 * A tree serves one probe run: make one per user.
 *
 * Not covered on purpose: O_CREAT on an existing file of another user in a
 * sticky world-writable directory (Linux's fs.protected_regular makes that a
 * local policy, not POSIX).
 */
#include "sfs_perm_probe.h"

/* files in f/; each has copies NAME.OP for the operations that change it */
const node_kind_t files[] = {
    {"600", WHO_ALICE, GRP_ALICE, 0600}, {"640", WHO_ALICE, GRP_ALICE, 0640},
    {"640t", WHO_ALICE, GRP_TEAM, 0640}, {"644", WHO_ALICE, GRP_ALICE, 0644},
    {"666", WHO_ALICE, GRP_ALICE, 0666}, {"400", WHO_ALICE, GRP_ALICE, 0400},
    {"200", WHO_ALICE, GRP_ALICE, 0200}, {"660t", WHO_ALICE, GRP_TEAM, 0660},
    {"755", WHO_ALICE, GRP_ALICE, 0755}, {"b600", WHO_BOB, GRP_BOB, 0600},
    {"b664t", WHO_BOB, GRP_TEAM, 0664},
};
const char *const file_copies[] = {"wr",  "rw",  "cr",  "tr",  "tc",  "cm",  "cos", "cop",
                                   "cor", "cgp", "cgt", "cgo", "cnn", "ut0", "ut1"};

/* files in f/ that get chmod 02755: setgid kept or cleared */
const node_kind_t sgid_files[] = {
    {"sg.aa", WHO_ALICE, GRP_ALICE, 0644}, {"sg.at", WHO_ALICE, GRP_TEAM, 0644},
    {"sg.ab", WHO_ALICE, GRP_BOB, 0644},   {"sg.bt", WHO_BOB, GRP_TEAM, 0644},
    {"sg.ba", WHO_BOB, GRP_ALICE, 0644},
};

/* set-id files in f/: a chown by the owner clears both bits (group execute
 * is set); a write by someone else than root clears them */
const node_kind_t setid_chown_files[] = {
    {"sid.a", WHO_ALICE, GRP_ALICE, 06755},
    {"sid.b", WHO_BOB, GRP_BOB, 06755},
};
const node_kind_t setid_write_files[] = {
    {"sidw.t", WHO_ALICE, GRP_TEAM, 06775},
    {"sidw.o", WHO_ALICE, GRP_ALICE, 06777},
};

/* directories at the top, each with the same contents (dir_entries) */
const node_kind_t dirs[] = {
    {"d700", WHO_ALICE, GRP_ALICE, 0700}, {"d750t", WHO_ALICE, GRP_TEAM, 0750},
    {"d755", WHO_ALICE, GRP_ALICE, 0755}, {"d711", WHO_ALICE, GRP_ALICE, 0711},
    {"d770t", WHO_ALICE, GRP_TEAM, 0770}, {"d777", WHO_ALICE, GRP_ALICE, 0777},
    {"d1777", WHO_ROOT, GRP_ROOT, 01777}, {"d1777a", WHO_ALICE, GRP_ALICE, 01777},
    {"d555", WHO_ALICE, GRP_ALICE, 0555}, {"d2775t", WHO_ALICE, GRP_TEAM, 02775},
    {"db700", WHO_BOB, GRP_BOB, 0700},
};

const entry_kind_t dir_entries[] = {
    {"afile", 0, WHO_ALICE, GRP_ALICE, 0644},  {"rm_a", 0, WHO_ALICE, GRP_ALICE, 0644},
    {"rm_b", 0, WHO_BOB, GRP_BOB, 0644},       {"mv_a", 0, WHO_ALICE, GRP_ALICE, 0644},
    {"mv_b", 0, WHO_BOB, GRP_BOB, 0644},       {"rmd_a", 1, WHO_ALICE, GRP_ALICE, 0755},
    {"rmd_b", 1, WHO_BOB, GRP_BOB, 0755},      {"mvd_w", 1, WHO_ALICE, GRP_ALICE, 0755},
    {"mvd_nw", 1, WHO_ALICE, GRP_ALICE, 0555}, {"mvd_bw", 1, WHO_BOB, GRP_BOB, 0755},
};

/* nested directories: an ancestor without search (or read) permission */
const entry_kind_t nested[] = {
    {"n1", 1, WHO_ALICE, GRP_ALICE, 0755},       {"n1/n2", 1, WHO_ALICE, GRP_ALICE, 0700},
    {"n1/n2/n3", 1, WHO_ALICE, GRP_ALICE, 0777}, {"n1/n2/n3/file", 0, WHO_ALICE, GRP_ALICE, 0666},
    {"n1/n2t", 1, WHO_ALICE, GRP_TEAM, 0750},    {"n1/n2t/file", 0, WHO_ALICE, GRP_ALICE, 0644},
    {"n1/n2r", 1, WHO_ALICE, GRP_ALICE, 0744},   {"n1/n2r/file", 0, WHO_ALICE, GRP_ALICE, 0644},
    {"n1/n2x", 1, WHO_ALICE, GRP_ALICE, 0711},   {"n1/n2x/file", 0, WHO_ALICE, GRP_ALICE, 0644},
};

const size_t files_count             = COUNT(files);
const size_t file_copies_count       = COUNT(file_copies);
const size_t sgid_files_count        = COUNT(sgid_files);
const size_t setid_chown_files_count = COUNT(setid_chown_files);
const size_t setid_write_files_count = COUNT(setid_write_files);
const size_t dirs_count              = COUNT(dirs);
const size_t dir_entries_count       = COUNT(dir_entries);
const size_t nested_count            = COUNT(nested);

const char *base; /* DIR */

const char *errname(int err)
{
    static char buf[32];
    const char *name = strerrorname_np(err);

    if (name) {
        return name;
    }
    snprintf(buf, sizeof(buf), "E%d", err);
    return buf;
}

char *path_of(char *buf, size_t len, const char *fmt, ...)
{
    va_list ap;
    int     n = snprintf(buf, len, "%s/", base);

    va_start(ap, fmt);
    vsnprintf(buf + n, len - (size_t)n, fmt, ap);
    va_end(ap);
    return buf;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc >= 3 && strcmp(argv[1], "setup") == 0) {
        if (strcmp(argv[2], "--as-owners") == 0) {
            as_owners = 1;
            argv++;
            argc--;
        }
        base = argv[2];
        return argc >= 3 ? do_setup(argc, argv) : 2;
    }
    if (argc == 3 && strcmp(argv[1], "probe") == 0) {
        base = argv[2];
        return do_probe();
    }
    fprintf(stderr,
            "usage: %s setup DIR [ALICE_UID BOB_UID TEAM_GID]\n"
            "       %s probe DIR\n",
            argv[0], argv[0]);
    return 2;
}
