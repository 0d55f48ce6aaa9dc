/*
 * Management's state files, as text (sfs_mgmt_state.h): the parsers and
 * formatters of mirror-state (storage mirror groups) and meta-mirror-state
 * (the metadata mirror). Pure: no I/O, no service; unit-tested
 * (tests/unit/service/test_mgmt_mirror.c) and fuzzed
 * (tests/fuzz/fuzz_mgmt_state.c: what a parser accepts, the formatter
 * writes again).
 */
#include "sfs_mgmt_state.h"

#include "sfs_errno.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sfs_mgmt_mirror_from_config(const sfs_config_t *config, sfs_mgmt_mirror_t *groups)
{
    memset(groups, 0, config->mirror_group_count * sizeof(*groups));
    for (uint32_t i = 0; i < config->mirror_group_count; i++) {
        groups[i].member[0] = config->mirror_groups[i].primary;
        groups[i].member[1] = config->mirror_groups[i].secondary;
        groups[i].primary   = config->mirror_groups[i].primary;
    }
}

int sfs_mgmt_mirror_state_parse(const char *name, uint32_t *state_p)
{
    static const uint32_t states[] = {SFS_MIRROR_STATE_GOOD, SFS_MIRROR_STATE_NEEDS_RESYNC,
                                      SFS_MIRROR_STATE_RESYNCING, SFS_MIRROR_STATE_BAD};

    for (size_t i = 0; i < sizeof(states) / sizeof(states[0]); i++) {
        if (strcmp(name, sfs_mirror_state_name(states[i])) == 0) {
            *state_p = states[i];
            return 0;
        }
    }
    return -1;
}

/* A decimal id with nothing else: 0 and *id_p, or -1. */
static int sfs_mgmt_mirror_id(const char *text, uint32_t *id_p)
{
    char         *end;
    unsigned long v;

    if (!text || text[0] < '0' || text[0] > '9') {
        return -1;
    }
    errno = 0;
    v     = strtoul(text, &end, 10);
    if (errno || *end || v == 0 || v > UINT32_MAX) {
        return -1;
    }
    *id_p = (uint32_t)v;
    return 0;
}

/* One group line, split into words: into groups[] (seen[] guards doubles). */
static int sfs_mgmt_mirror_line(const sfs_config_t *config, char **w, int n, const char *path,
                                int no, sfs_mgmt_mirror_t *groups, uint8_t *seen)
{
    uint32_t id, m[2], primary, st[2];
    uint32_t i;

    if (n != 10 || strcmp(w[0], "group") != 0 || strcmp(w[2], "members") != 0 ||
        strcmp(w[5], "primary") != 0 || strcmp(w[7], "states") != 0 ||
        sfs_mgmt_mirror_id(w[1], &id) || sfs_mgmt_mirror_id(w[3], &m[0]) ||
        sfs_mgmt_mirror_id(w[4], &m[1]) || sfs_mgmt_mirror_id(w[6], &primary)) {
        return sfs_error_set(-EBADMSG,
                             "%s, line %d: not \"group ID members A B primary A|B states "
                             "STATE STATE\"",
                             path, no);
    }
    for (int k = 0; k < 2; k++) {
        if (sfs_mgmt_mirror_state_parse(w[8 + k], &st[k]) != 0) {
            return sfs_error_set(-EBADMSG, "%s, line %d: unknown state \"%s\"", path, no, w[8 + k]);
        }
    }
    for (i = 0; i < config->mirror_group_count && config->mirror_groups[i].id != id; i++) {
    }
    if (i == config->mirror_group_count) {
        return sfs_error_set(-EBADMSG,
                             "%s, line %d: mirror group %" PRIu32 " is not in the config %s "
                             "(remove the file to start from the config's primaries)",
                             path, no, id, config->path);
    }
    if (m[0] != config->mirror_groups[i].primary || m[1] != config->mirror_groups[i].secondary) {
        return sfs_error_set(-EBADMSG,
                             "%s, line %d: mirror group %" PRIu32 " has members %" PRIu32
                             " and %" PRIu32 " here, %" PRIu32 " and %" PRIu32
                             " in the config %s (remove the file to start from the config's "
                             "primaries)",
                             path, no, id, m[0], m[1], config->mirror_groups[i].primary,
                             config->mirror_groups[i].secondary, config->path);
    }
    if (primary != m[0] && primary != m[1]) {
        return sfs_error_set(-EBADMSG,
                             "%s, line %d: primary %" PRIu32 " is not a member of mirror group "
                             "%" PRIu32,
                             path, no, primary, id);
    }
    if (seen[i]) {
        return sfs_error_set(-EBADMSG, "%s, line %d: mirror group %" PRIu32 " a second time", path,
                             no, id);
    }
    seen[i]            = 1;
    groups[i].primary  = primary;
    groups[i].state[0] = st[0];
    groups[i].state[1] = st[1];
    return 0;
}

int sfs_mgmt_mirror_parse(const sfs_config_t *config, const char *text, const char *path,
                          sfs_mgmt_mirror_t *groups)
{
    const char *line = text;
    uint8_t    *seen = calloc(config->mirror_group_count + 1, 1);
    int         no = 0, rc = 0;

    if (!seen) {
        return -ENOMEM;
    }
    if (!*text) {
        rc = sfs_error_set(-EBADMSG, "%s: empty (a torn write?)", path);
    }
    while (*line && rc == 0) {
        const char *nl = strchr(line, '\n');
        char        buf[256], *words[12], *save = NULL;
        size_t      len;
        int         n = 0;

        no++;
        if (!nl) {
            rc = sfs_error_set(-EBADMSG, "%s, line %d: no end of line (a torn write?)", path, no);
            break;
        }
        len = (size_t)(nl - line);
        if (len >= sizeof(buf)) {
            rc = sfs_error_set(-EBADMSG, "%s, line %d: too long", path, no);
            break;
        }
        memcpy(buf, line, len);
        buf[len] = '\0';
        line     = nl + 1;
        if (no == 1) {
            if (strcmp(buf, SFS_MGMT_MIRROR_HEADER) != 0) {
                rc =
                    sfs_error_set(-EBADMSG, "%s, line 1: not \"%s\"", path, SFS_MGMT_MIRROR_HEADER);
            }
            continue;
        }
        for (char *w = strtok_r(buf, " ", &save); w && n < 12; w = strtok_r(NULL, " ", &save)) {
            words[n++] = w;
        }
        rc = sfs_mgmt_mirror_line(config, words, n, path, no, groups, seen);
    }
    free(seen);
    return rc;
}

int sfs_mgmt_mirror_format(const sfs_config_t *config, const sfs_mgmt_mirror_t *groups, char *buf,
                           size_t size)
{
    size_t used = (size_t)snprintf(buf, size, "%s\n", SFS_MGMT_MIRROR_HEADER);

    for (uint32_t i = 0; i < config->mirror_group_count && used < size; i++) {
        used += (size_t)snprintf(
            buf + used, size - used,
            "group %" PRIu32 " members %" PRIu32 " %" PRIu32 " primary %" PRIu32 " states %s %s\n",
            config->mirror_groups[i].id, groups[i].member[0], groups[i].member[1],
            groups[i].primary, sfs_mirror_state_name(groups[i].state[0]),
            sfs_mirror_state_name(groups[i].state[1]));
    }
    if (used >= size) {
        return sfs_error_set(-ENOSPC, "%u mirror groups do not fit a state of %zu bytes",
                             config->mirror_group_count, size);
    }
    return (int)used;
}

int sfs_mgmt_meta_mirror_parse(const char *text, const char *path, uint32_t *state_p,
                               uint64_t *seq_p)
{
    const char        *nl = strchr(text, '\n');
    const char        *p, *name, *digits;
    char               state[32];
    size_t             hl  = strlen(SFS_MGMT_META_MIRROR_HEADER), name_len, n_digits;
    unsigned long long seq = 0;

    if (!nl || (size_t)(nl - text) != hl || strncmp(text, SFS_MGMT_META_MIRROR_HEADER, hl) != 0) {
        return sfs_error_set(-EBADMSG, "%s, line 1: not \"%s\"%s", path,
                             SFS_MGMT_META_MIRROR_HEADER, nl ? "" : " (a torn write?)");
    }
    /* exactly "state NAME batch DIGITS\n", and nothing after it: what
     * sfs_mgmt_meta_mirror_format writes, byte for byte */
    p    = nl + 1;
    name = p + 6;
    if (strncmp(p, "state ", 6) != 0) {
        goto bad;
    }
    for (name_len = 0; (name[name_len] >= 'a' && name[name_len] <= 'z') || name[name_len] == '-';
         name_len++) {
    }
    if (name_len == 0 || name_len >= sizeof(state) || strncmp(name + name_len, " batch ", 7) != 0) {
        goto bad;
    }
    digits = name + name_len + 7;
    for (n_digits = 0; digits[n_digits] >= '0' && digits[n_digits] <= '9'; n_digits++) {
    }
    if (n_digits == 0 || strcmp(digits + n_digits, "\n") != 0 ||
        (n_digits > 1 && digits[0] == '0')) {
        goto bad;
    }
    for (size_t i = 0; i < n_digits; i++) {
        unsigned d = (unsigned)(digits[i] - '0');

        if (seq > (UINT64_MAX - d) / 10) {
            return sfs_error_set(-EBADMSG, "%s, line 2: batch %.*s is out of range", path,
                                 (int)n_digits, digits);
        }
        seq = seq * 10 + d;
    }
    memcpy(state, name, name_len);
    state[name_len] = '\0';
    /* (bad is a storage member's state: a metadata mirror is never rebuilt) */
    if (sfs_mgmt_mirror_state_parse(state, state_p) != 0 || *state_p == SFS_MIRROR_STATE_BAD) {
        return sfs_error_set(-EBADMSG, "%s, line 2: unknown state \"%s\"", path, state);
    }
    *seq_p = seq;
    return 0;

bad:
    return sfs_error_set(-EBADMSG,
                         "%s, line 2: not \"state good|needs-resync|resyncing batch N\" as the "
                         "last line",
                         path);
}

int sfs_mgmt_meta_mirror_format(uint32_t state, uint64_t seq, char *buf, size_t size)
{
    int len = snprintf(buf, size, "%s\nstate %s batch %" PRIu64 "\n", SFS_MGMT_META_MIRROR_HEADER,
                       sfs_mirror_state_name(state), seq);

    if (len < 0 || (size_t)len >= size) {
        return sfs_error_set(-ENOSPC, "the metadata mirror's state does not fit %zu bytes", size);
    }
    return len;
}

/* DIGITS at `p` (no leading zero, at most `max`): the count of digits
 * taken, or 0 when there are none or the number is out of range. */
static size_t sfs_mgmt_state_number(const char *p, uint64_t max, uint64_t *value_p)
{
    uint64_t value = 0;
    size_t   n;

    for (n = 0; p[n] >= '0' && p[n] <= '9'; n++) {
        unsigned d = (unsigned)(p[n] - '0');

        if (value > (max - d) / 10) {
            return 0;
        }
        value = value * 10 + d;
    }
    if (n == 0 || (n > 1 && p[0] == '0')) {
        return 0;
    }
    *value_p = value;
    return n;
}

int sfs_mgmt_meta_primary_parse(const char *text, const char *path, uint32_t *rank_p,
                                uint64_t *seq_p)
{
    const char *nl = strchr(text, '\n');
    const char *p;
    size_t      hl = strlen(SFS_MGMT_META_PRIMARY_HEADER), n;
    uint64_t    rank, seq;

    if (!nl || (size_t)(nl - text) != hl || strncmp(text, SFS_MGMT_META_PRIMARY_HEADER, hl) != 0) {
        return sfs_error_set(-EBADMSG, "%s, line 1: not \"%s\"%s", path,
                             SFS_MGMT_META_PRIMARY_HEADER, nl ? "" : " (a torn write?)");
    }
    /* exactly "rank N batch N\n", and nothing after it */
    p = nl + 1;
    if (strncmp(p, "rank ", 5) != 0 || (n = sfs_mgmt_state_number(p + 5, UINT32_MAX, &rank)) == 0) {
        goto bad;
    }
    p += 5 + n;
    if (strncmp(p, " batch ", 7) != 0 ||
        (n = sfs_mgmt_state_number(p + 7, UINT64_MAX, &seq)) == 0 || strcmp(p + 7 + n, "\n") != 0) {
        goto bad;
    }
    *rank_p = (uint32_t)rank;
    *seq_p  = seq;
    return 0;

bad:
    return sfs_error_set(-EBADMSG, "%s, line 2: not \"rank N batch N\" as the last line", path);
}

int sfs_mgmt_meta_primary_format(uint32_t rank, uint64_t seq, char *buf, size_t size)
{
    int len = snprintf(buf, size, "%s\nrank %" PRIu32 " batch %" PRIu64 "\n",
                       SFS_MGMT_META_PRIMARY_HEADER, rank, seq);

    return len < 0 || (size_t)len >= size ? -ENOSPC : len;
}
