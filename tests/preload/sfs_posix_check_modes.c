/*
 * sfs_posix_check: the modes of every create (open, creat, openat, mkdir,
 * mkdirat, fopen, the mkstemp family, mkdtemp) compared with what the
 * kernel gives the same calls in a local directory, under six umasks.
 */
#include "sfs_posix_check.h"

/* The mode a create gave, or -1. */
static int mode_of(const char *path)
{
    struct stat st;

    return stat(path, &st) == 0 ? (int)(st.st_mode & 07777) : -1;
}

/* Record a mismatch between stripefs and the kernel in `out` (-1: the
 * create failed). */
static void note_mode(char *out, size_t size, int *bad, const char *what, mode_t mask, mode_t mode,
                      int sfs, int kernel)
{
    size_t used = strlen(out);
    char   got[2][16];

    if (sfs == kernel && kernel >= 0) {
        return;
    }
    (*bad)++;
    for (int i = 0; i < 2; i++) {
        int value = i == 0 ? sfs : kernel;

        if (value < 0) {
            snprintf(got[i], sizeof(got[i]), "failed");
        } else {
            snprintf(got[i], sizeof(got[i]), "%04o", (unsigned)value);
        }
    }
    if (used + 100 < size &&
        snprintf(out + used, size - used, " [%s mode %04o umask %03o: stripefs %s, kernel %s]",
                 what, (unsigned)mode, (unsigned)mask, got[0], got[1]) < 0) {
        out[used] = '\0';
    }
}

/* Two mkstemp calls with one template make two different files, and the
 * template's X's become the name. */
static void fd_pair_check(const char *tmpl)
{
    char a[PATH_MAX], b[PATH_MAX];
    int  fa, fb;

    snprintf(a, sizeof(a), "%s", tmpl);
    snprintf(b, sizeof(b), "%s", tmpl);
    fa = mkstemp(a);
    fb = mkstemp(b);
    CHECK(fa >= 0 && fb >= 0 && strcmp(a, b) != 0 && strstr(a, "XXXXXX") == NULL &&
              write(fa, "x", 1) == 1 && size_of(a) == 1 && size_of(b) == 0,
          "mkstemp twice with one template: %s and %s, both usable", a, b);
    close(fa);
    close(fb);
}

/* Every create honours mode & ~umask as the kernel does: the same calls on
 * stripefs and on the local directory, under several umasks, compared. */
void check_create_modes(void)
{
    static const mode_t masks[] = {022, 027, 077, 0, 002, 0777};
    static const mode_t modes[] = {0644, 0666, 0777, 0600, 06777, 01777, 04755, 0};
    char                roots[2][1100], diff[4096], name[128];
    mode_t              saved = umask(022);
    int                 dirs[2], bad;

    CHECK(mkdir(P("modes"), 0755) == 0, "mkdir modes");
    CHECK(mkdir(L("modes"), 0755) == 0 || errno == EEXIST, "local mkdir modes");
    snprintf(roots[0], sizeof(roots[0]), "%s", P("modes"));
    snprintf(roots[1], sizeof(roots[1]), "%s", L("modes"));
    dirs[0] = open(roots[0], O_RDONLY | O_DIRECTORY);
    dirs[1] = open(roots[1], O_RDONLY | O_DIRECTORY);
    CHECK(dirs[0] >= 0 && dirs[1] >= 0, "open both modes directories");

    static const char *calls[] = {"open", "creat", "openat", "mkdir", "mkdirat"};
    for (size_t c = 0; c < sizeof(calls) / sizeof(calls[0]); c++) {
        diff[0] = '\0';
        bad     = 0;
        for (size_t m = 0; m < sizeof(masks) / sizeof(masks[0]); m++) {
            for (size_t k = 0; k < sizeof(modes) / sizeof(modes[0]); k++) {
                int got[2] = {-1, -1};

                snprintf(name, sizeof(name), "%s-%03o-%04o", calls[c], (unsigned)masks[m],
                         (unsigned)modes[k]);
                for (int side = 0; side < 2; side++) {
                    char full[1300];
                    int  fd = -1;

                    if (snprintf(full, sizeof(full), "%s/%s", roots[side], name) >=
                        (int)sizeof(full)) {
                        continue;
                    }
                    umask(masks[m]);
                    switch (c) {
                    case 0:
                        fd = open(full, O_WRONLY | O_CREAT | O_EXCL, modes[k]);
                        break;
                    case 1:
                        fd = creat(full, modes[k]);
                        break;
                    case 2:
                        fd = openat(dirs[side], name, O_RDWR | O_CREAT | O_EXCL, modes[k]);
                        break;
                    case 3:
                        fd = mkdir(full, modes[k]) == 0 ? INT_MAX : -1;
                        break;
                    default:
                        fd = mkdirat(dirs[side], name, modes[k]) == 0 ? INT_MAX : -1;
                        break;
                    }
                    umask(022);
                    if (fd >= 0 && fd != INT_MAX) {
                        close(fd);
                    }
                    got[side] = fd >= 0 ? mode_of(full) : -1;
                }
                note_mode(diff, sizeof(diff), &bad, calls[c], masks[m], modes[k], got[0], got[1]);
            }
        }
        CHECK(bad == 0, "%s: mode & ~umask as the kernel gives, %zu umasks x %zu modes%s", calls[c],
              sizeof(masks) / sizeof(masks[0]), sizeof(modes) / sizeof(modes[0]), diff);
    }

    /* fopen, the mkstemp family and mkdtemp make their own modes */
    static const char *makers[] = {"fopen", "mkstemp", "mkostemp", "mkstemps", "mkdtemp"};
    for (size_t c = 0; c < sizeof(makers) / sizeof(makers[0]); c++) {
        diff[0] = '\0';
        bad     = 0;
        for (size_t m = 0; m < sizeof(masks) / sizeof(masks[0]); m++) {
            int got[2] = {-1, -1};

            for (int side = 0; side < 2; side++) {
                char  full[1300];
                int   fd = -1;
                FILE *stream;

                got[side] = -1;
                if (snprintf(full, sizeof(full), "%s/%s-%03o%s", roots[side], makers[c],
                             (unsigned)masks[m],
                             c == 0   ? ""
                             : c == 3 ? "-XXXXXX.sfx"
                                      : "-XXXXXX") >= (int)sizeof(full)) {
                    continue;
                }
                umask(masks[m]);
                switch (c) {
                case 0:
                    stream = fopen(full, "w");
                    fd     = stream && fclose(stream) == 0 ? INT_MAX : -1;
                    break;
                case 1:
                    fd = mkstemp(full);
                    break;
                case 2:
                    fd = mkostemp(full, O_CLOEXEC);
                    break;
                case 3:
                    fd = mkstemps(full, 4);
                    break;
                default:
                    fd = mkdtemp(full) ? INT_MAX : -1;
                    break;
                }
                umask(022);
                if (fd >= 0 && fd != INT_MAX) {
                    close(fd);
                }
                got[side] = fd >= 0 && strstr(full, "XXXXXX") == NULL ? mode_of(full) : -1;
            }
            note_mode(diff, sizeof(diff), &bad, makers[c], masks[m], 0, got[0], got[1]);
        }
        CHECK(bad == 0, "%s: the mode the kernel gives, under %zu umasks%s", makers[c],
              sizeof(masks) / sizeof(masks[0]), diff);
    }
    {
        char tmpl[1300];

        snprintf(tmpl, sizeof(tmpl), "%s/bad-XXXXX", roots[0]);
        CHECK_ERRNO(mkstemp(tmpl), EINVAL);
        snprintf(tmpl, sizeof(tmpl), "%s/bad-XXXXXX.s", roots[0]);
        CHECK_ERRNO(mkstemps(tmpl, 3), EINVAL);
        CHECK_ERRNO(mkdtemp(tmpl) == NULL ? -1 : 0, EINVAL);
        snprintf(tmpl, sizeof(tmpl), "%s/nodir/x-XXXXXX", roots[0]);
        CHECK_ERRNO(mkstemp(tmpl), ENOENT);
        snprintf(tmpl, sizeof(tmpl), "%s/two-XXXXXX", roots[0]);
        fd_pair_check(tmpl);
    }

    /* a umask set behind libc's back (the system call itself) counts too */
    syscall(SYS_umask, 027);
    {
        int fd = open(P("modes/raw-umask"), O_WRONLY | O_CREAT | O_EXCL, 0666);

        CHECK(fd >= 0 && close(fd) == 0 && mode_of(P("modes/raw-umask")) == 0640,
              "a umask set with the raw system call applies (mode %04o)",
              (unsigned)mode_of(P("modes/raw-umask")));
    }
    umask(saved);
    close(dirs[0]);
    close(dirs[1]);
}
