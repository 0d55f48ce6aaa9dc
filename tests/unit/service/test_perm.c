/* POSIX permission rules of the metadata server (service/sfs_perm.c), case
 * by case as Linux decides them on ext4 (see the comments for the kernel
 * function each case follows). The multi-user tests compare the whole
 * service with a local ext4; these pin the rules down one at a time. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "sfs_cap.h"
#include "sfs_perm.h"

static sfs_cred_t user(uint32_t uid, uint32_t gid)
{
    sfs_cred_t cred;

    memset(&cred, 0, sizeof(cred));
    cred.uid = uid;
    cred.gid = gid;
    return cred;
}

static sfs_attr_t entry(uint32_t type, uint32_t mode, uint32_t uid, uint32_t gid)
{
    sfs_attr_t attr;

    memset(&attr, 0, sizeof(attr));
    attr.type = type;
    attr.mode = mode;
    attr.uid  = uid;
    attr.gid  = gid;
    return attr;
}

static void test_classes(void **state)
{
    sfs_cred_t alice = user(1001, 1001), bob = user(1002, 1002);
    sfs_attr_t file = entry(SFS_TYPE_FILE, 0640, 1001, 2000);

    (void)state;
    assert_int_equal(sfs_perm_check(&alice, &file, SFS_MAY_READ | SFS_MAY_WRITE), 0);
    assert_int_equal(sfs_perm_check(&bob, &file, SFS_MAY_READ), -EACCES);
    bob.groups[bob.group_count++] = 2000; /* a supplementary group */
    assert_int_equal(sfs_perm_check(&bob, &file, SFS_MAY_READ), 0);
    assert_int_equal(sfs_perm_check(&bob, &file, SFS_MAY_WRITE), -EACCES);
    /* the first class that matches decides: an owner without bits is refused
     * even when others may (generic_permission) */
    file.mode = 0077;
    assert_int_equal(sfs_perm_check(&alice, &file, SFS_MAY_READ), -EACCES);
}

static void test_privileged(void **state)
{
    sfs_cred_t root = user(0, 0), server = user(0, 0);
    sfs_attr_t file = entry(SFS_TYPE_FILE, 0000, 1001, 1001);
    sfs_attr_t dir  = entry(SFS_TYPE_DIR, 0000, 1001, 1001);

    (void)state;
    root.flags   = SFS_CRED_ROOT;
    server.flags = SFS_CRED_SERVER;
    assert_int_equal(sfs_perm_check(&root, &file, SFS_MAY_READ | SFS_MAY_WRITE), 0);
    assert_int_equal(sfs_perm_check(&server, &file, SFS_MAY_WRITE), 0);
    /* CAP_DAC_OVERRIDE: search any directory, execute only with an x bit */
    assert_int_equal(sfs_perm_check(&root, &dir, SFS_MAY_EXEC), 0);
    assert_int_equal(sfs_perm_check(&root, &file, SFS_MAY_EXEC), -EACCES);
    file.mode = 0100;
    assert_int_equal(sfs_perm_check(&root, &file, SFS_MAY_EXEC), 0);
    /* squashed root is nobody: no rights */
    root       = user(SFS_UID_NOBODY, SFS_GID_NOBODY);
    root.flags = SFS_CRED_SQUASHED;
    assert_int_equal(sfs_perm_check(&root, &file, SFS_MAY_READ), -EACCES);
}

static void test_sticky(void **state)
{
    sfs_cred_t alice = user(1001, 1001), bob = user(1002, 1002), carol = user(1003, 1003);
    sfs_attr_t tmp = entry(SFS_TYPE_DIR, 01777, 1003, 1003);
    sfs_attr_t f   = entry(SFS_TYPE_FILE, 0666, 1001, 1001);

    (void)state;
    assert_int_equal(sfs_perm_sticky(&alice, &tmp, &f), 0);    /* her own file */
    assert_int_equal(sfs_perm_sticky(&bob, &tmp, &f), -EPERM); /* another's */
    assert_int_equal(sfs_perm_sticky(&carol, &tmp, &f), 0);    /* the dir's owner */
    tmp.mode = 0777;
    assert_int_equal(sfs_perm_sticky(&bob, &tmp, &f), 0); /* no sticky bit */
}

static void test_chmod(void **state)
{
    sfs_cred_t alice = user(1001, 1001), bob = user(1002, 1002);
    sfs_attr_t f    = entry(SFS_TYPE_FILE, 0644, 1001, 3000);
    uint32_t   mode = 0;

    (void)state;
    assert_int_equal(sfs_perm_chmod(&bob, &f, 0777, &mode), -EPERM);
    /* an owner outside the file's group loses setgid (setattr_prepare) */
    assert_int_equal(sfs_perm_chmod(&alice, &f, 02755, &mode), 0);
    assert_int_equal(mode, 0755);
    alice.groups[alice.group_count++] = 3000;
    assert_int_equal(sfs_perm_chmod(&alice, &f, 02755, &mode), 0);
    assert_int_equal(mode, 02755);
    assert_int_equal(sfs_perm_chmod(&alice, &f, 017777, &mode), 0);
    assert_int_equal(mode, 07777);
}

static void test_chown(void **state)
{
    sfs_cred_t alice = user(1001, 1001), root = user(0, 0);
    sfs_attr_t f = entry(SFS_TYPE_FILE, 06755, 1001, 1001);
    sfs_attr_t d = entry(SFS_TYPE_DIR, 02775, 1001, 1001);

    (void)state;
    root.flags                        = SFS_CRED_ROOT;
    alice.groups[alice.group_count++] = 3000;
    /* giving a file away is root's */
    assert_int_equal(sfs_perm_chown(&alice, &f, 1002, SFS_ID_UNCHANGED), -EPERM);
    /* a group she is not in */
    assert_int_equal(sfs_perm_chown(&alice, &f, SFS_ID_UNCHANGED, 4000), -EPERM);
    /* one she is in: allowed, and setuid/setgid (group-executable) go */
    assert_int_equal(sfs_perm_chown(&alice, &f, SFS_ID_UNCHANGED, 3000), 0);
    assert_int_equal(f.gid, 3000);
    assert_int_equal(f.mode, 0755);
    /* to herself: a no-op that still succeeds */
    assert_int_equal(sfs_perm_chown(&alice, &f, 1001, 3000), 0);
    assert_int_equal(sfs_perm_chown(&root, &f, 1002, 1002), 0);
    assert_int_equal(f.uid, 1002);
    /* directories keep their setgid bit */
    assert_int_equal(sfs_perm_chown(&root, &d, 1002, SFS_ID_UNCHANGED), 0);
    assert_int_equal(d.mode, 02775);
}

static void test_utimes(void **state)
{
    sfs_cred_t bob = user(1002, 1002);
    sfs_attr_t f   = entry(SFS_TYPE_FILE, 0666, 1001, 1001);

    (void)state;
    /* utimes(NULL) with write permission, explicit times only as owner */
    assert_int_equal(sfs_perm_utimes(&bob, &f, 1), 0);
    assert_int_equal(sfs_perm_utimes(&bob, &f, 0), -EPERM);
    f.mode = 0644;
    assert_int_equal(sfs_perm_utimes(&bob, &f, 1), -EACCES);
}

static void test_new_entries(void **state)
{
    sfs_cred_t alice  = user(1001, 1001);
    sfs_attr_t plain  = entry(SFS_TYPE_DIR, 0755, 0, 0);
    sfs_attr_t setgid = entry(SFS_TYPE_DIR, 02775, 0, 3000);
    uint32_t   uid, gid, mode;

    (void)state;
    sfs_perm_new_entry(&alice, &plain, 0, 0644, &uid, &gid, &mode);
    assert_int_equal(uid, 1001);
    assert_int_equal(gid, 1001);
    assert_int_equal(mode, 0644);
    /* under a setgid directory: its group; new directories inherit setgid */
    sfs_perm_new_entry(&alice, &setgid, 1, 0755, &uid, &gid, &mode);
    assert_int_equal(gid, 3000);
    assert_int_equal(mode, 02755);
    /* a setgid file whose group is not hers loses the bit (inode_init_owner) */
    sfs_perm_new_entry(&alice, &setgid, 0, 02755, &uid, &gid, &mode);
    assert_int_equal(gid, 3000);
    assert_int_equal(mode, 0755);
}

static void test_capabilities(void **state)
{
    sfs_auth_key_t cluster, key;
    sfs_cap_t      cap;

    (void)state;
    memset(&cluster, 7, sizeof(cluster));
    sfs_cap_key(&cluster, &key);
    memset(&cap, 0, sizeof(cap));
    /* the all-zero capability is none */
    assert_int_equal(sfs_cap_check(&key, &cap, 42, 0, 1001, 100), -EACCES);
    cap.entry_id  = 42;
    cap.access    = SFS_CAP_READ;
    cap.uid       = 1001;
    cap.expires_s = 200;
    sfs_cap_seal(&key, &cap);
    assert_int_equal(sfs_cap_check(&key, &cap, 42, SFS_CAP_READ, 1001, 100), 0);
    assert_int_equal(sfs_cap_check(&key, &cap, 42, 0, 1001, 100), 0); /* a stat */
    assert_int_equal(sfs_cap_check(&key, &cap, 43, SFS_CAP_READ, 1001, 100), -EACCES);
    assert_int_equal(sfs_cap_check(&key, &cap, 42, SFS_CAP_WRITE, 1001, 100), -EACCES);
    assert_int_equal(sfs_cap_check(&key, &cap, 42, SFS_CAP_READ, 1002, 100), -EACCES);
    assert_int_equal(sfs_cap_check(&key, &cap, 42, SFS_CAP_READ, 1001, 200), -EKEYEXPIRED);
    /* any change breaks the seal */
    cap.access |= SFS_CAP_WRITE;
    assert_int_equal(sfs_cap_check(&key, &cap, 42, SFS_CAP_READ, 1001, 100), -EACCES);
    cap.access = SFS_CAP_READ;
    cap.mac[0] ^= 1;
    assert_int_equal(sfs_cap_check(&key, &cap, 42, SFS_CAP_READ, 1001, 100), -EACCES);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_classes),     cmocka_unit_test(test_privileged),
        cmocka_unit_test(test_sticky),      cmocka_unit_test(test_chmod),
        cmocka_unit_test(test_chown),       cmocka_unit_test(test_utimes),
        cmocka_unit_test(test_new_entries), cmocka_unit_test(test_capabilities),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
