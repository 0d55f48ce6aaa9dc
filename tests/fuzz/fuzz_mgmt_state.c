/*
 * Management's state files (service/sfs_mgmt_state.c), fed arbitrary text:
 * the parsers must never read out of bounds, and what they accept must be
 * what the formatters write (the first byte picks the file: bit 1 set,
 * meta-primary; else bit 0 set, meta-mirror-state; else mirror-state):
 * - meta-mirror-state: accepted text is exactly the formatter's output for
 *   the state and batch parsed;
 * - meta-primary: accepted text is exactly the formatter's output for the
 *   rank and batch parsed;
 * - mirror-state (against a config of three mirror groups): the groups
 *   parsed, written and parsed again come back the same, and the second
 *   text is the first's formatting again.
 */
#include "sfs_mgmt_state.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define GROUPS 3

static const sfs_config_mirror_group_t config_groups[GROUPS] = {
    {.id = 1, .primary = 101, .secondary = 201},
    {.id = 2, .primary = 301, .secondary = 401},
    {.id = 3, .primary = 102, .secondary = 202},
};

static void fuzz_meta(const char *text)
{
    uint32_t state;
    uint64_t seq;
    char     out[128];

    if (sfs_mgmt_meta_mirror_parse(text, "f", &state, &seq) != 0) {
        return;
    }
    if (sfs_mgmt_meta_mirror_format(state, seq, out, sizeof(out)) < 0 || strcmp(out, text) != 0) {
        abort();
    }
}

static void fuzz_primary(const char *text)
{
    uint32_t rank;
    uint64_t seq;
    char     out[128];

    if (sfs_mgmt_meta_primary_parse(text, "f", &rank, &seq) != 0) {
        return;
    }
    if (sfs_mgmt_meta_primary_format(rank, seq, out, sizeof(out)) < 0 || strcmp(out, text) != 0) {
        abort();
    }
}

static void fuzz_groups(const char *text)
{
    static sfs_config_t config; /* (large: not on the stack) */
    sfs_mgmt_mirror_t   once[GROUPS], twice[GROUPS];
    char                out[1024], again[1024];

    config.mirror_groups      = (sfs_config_mirror_group_t *)config_groups;
    config.mirror_group_count = GROUPS;
    sfs_mgmt_mirror_from_config(&config, once);
    if (sfs_mgmt_mirror_parse(&config, text, "f", once) != 0) {
        return;
    }
    if (sfs_mgmt_mirror_format(&config, once, out, sizeof(out)) < 0) {
        abort();
    }
    sfs_mgmt_mirror_from_config(&config, twice);
    if (sfs_mgmt_mirror_parse(&config, out, "f", twice) != 0 ||
        sfs_mgmt_mirror_format(&config, twice, again, sizeof(again)) < 0 || strcmp(out, again)) {
        abort();
    }
    for (int i = 0; i < GROUPS; i++) {
        if (once[i].primary != twice[i].primary || once[i].state[0] != twice[i].state[0] ||
            once[i].state[1] != twice[i].state[1]) {
            abort();
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t length)
{
    char *text;

    if (length < 1 || length > 8192) {
        return 0;
    }
    text = malloc(length); /* the file's text after the selector byte, NUL-terminated */
    if (!text) {
        return 0;
    }
    memcpy(text, data + 1, length - 1);
    text[length - 1] = '\0';
    if (data[0] & 2) {
        fuzz_primary(text);
    } else if (data[0] & 1) {
        fuzz_meta(text);
    } else {
        fuzz_groups(text);
    }
    free(text);
    return 0;
}
