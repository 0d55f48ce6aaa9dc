/*
 * Sizes and durations as people write them in configs and on command lines:
 * "512K", "4MiB", "12T", "1.5G" (binary units, whole bytes) and "30s",
 * "500ms", "2m", "1h", "10" (seconds when no unit is given).
 */
#include "sfs_config.h"
#include "sfs_errno.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

typedef unsigned __int128 sfs_u128_t;

/* More significant digits than any valid value can need: stops the
 * accumulator long before it could overflow. */
#define SFS_UNITS_MAX_DIGITS 30
/* At most 18 digits after the point. */
#define SFS_UNITS_MAX_DIVISOR ((sfs_u128_t)1000000000000000000ull)

typedef struct sfs_units_unit {
    const char *name;
    uint64_t    factor;
} sfs_units_unit_t;

static const sfs_units_unit_t sfs_units_size[] = {
    {"", 1},
    {"b", 1},
    {"k", 1ull << 10},
    {"kb", 1ull << 10},
    {"kib", 1ull << 10},
    {"m", 1ull << 20},
    {"mb", 1ull << 20},
    {"mib", 1ull << 20},
    {"g", 1ull << 30},
    {"gb", 1ull << 30},
    {"gib", 1ull << 30},
    {"t", 1ull << 40},
    {"tb", 1ull << 40},
    {"tib", 1ull << 40},
    {"p", 1ull << 50},
    {"pb", 1ull << 50},
    {"pib", 1ull << 50},
    {"e", 1ull << 60},
    {"eb", 1ull << 60},
    {"eib", 1ull << 60},
};

static const sfs_units_unit_t sfs_units_duration[] = {
    {"", 1000},       {"ms", 1},          {"s", 1000},           {"sec", 1000},
    {"m", 60 * 1000}, {"min", 60 * 1000}, {"h", 60 * 60 * 1000}, {"d", 24 * 60 * 60 * 1000},
};

/* Appends one decimal digit to the significand; leading zeros do not count
 * towards the digit limit. */
static int sfs_units_add_digit(sfs_u128_t *significand_p, unsigned *digits_p, char c)
{
    if (*significand_p != 0 || c != '0') {
        (*digits_p)++;
    }
    if (*digits_p > SFS_UNITS_MAX_DIGITS) {
        return -ERANGE;
    }
    *significand_p = *significand_p * 10 + (unsigned)(c - '0');
    return 0;
}

/* A number with an optional fraction and a unit from `units`, converted to
 * whole base units (bytes, milliseconds) no larger than `max`. `what` names
 * the kind of value in the recorded error detail. */
static int sfs_units_parse(const char *text, const sfs_units_unit_t *units, size_t unit_count,
                           const char *what, const char *unit_help, uint64_t max, uint64_t *value_p)
{
    const char *p           = text;
    sfs_u128_t  significand = 0, divisor = 1, scaled;
    unsigned    digits = 0;
    const char *unit;
    size_t      unit_len;

    if (text == NULL) {
        return sfs_error_set(-EINVAL, "no %s given", what);
    }
    while (*p == ' ' || *p == '\t') {
        p++;
    }
    if (!isdigit((unsigned char)*p)) {
        return sfs_error_set(-EINVAL, "bad %s '%.40s': expected a number and a unit (%s)", what,
                             text, unit_help);
    }
    for (; isdigit((unsigned char)*p); p++) {
        if (sfs_units_add_digit(&significand, &digits, *p)) {
            goto err_range;
        }
    }
    if (*p == '.') {
        p++;
        if (!isdigit((unsigned char)*p)) {
            return sfs_error_set(-EINVAL, "bad %s '%.40s': no digits after the '.'", what, text);
        }
        for (; isdigit((unsigned char)*p); p++) {
            if (divisor >= SFS_UNITS_MAX_DIVISOR) {
                return sfs_error_set(-EINVAL, "bad %s '%.40s': too many digits after the '.'", what,
                                     text);
            }
            if (sfs_units_add_digit(&significand, &digits, *p)) {
                goto err_range;
            }
            divisor *= 10;
        }
    }
    while (*p == ' ' || *p == '\t') {
        p++;
    }
    unit     = p;
    unit_len = strlen(unit);
    while (unit_len > 0 && (unit[unit_len - 1] == ' ' || unit[unit_len - 1] == '\t')) {
        unit_len--;
    }
    for (size_t i = 0; i < unit_count; i++) {
        if (strlen(units[i].name) != unit_len || strncasecmp(units[i].name, unit, unit_len) != 0) {
            continue;
        }
        if (significand > ~(sfs_u128_t)0 / units[i].factor) {
            goto err_range;
        }
        scaled = significand * units[i].factor;
        if (scaled % divisor != 0) {
            return sfs_error_set(-EINVAL, "bad %s '%.40s': not a whole number of %s", what, text,
                                 units == sfs_units_size ? "bytes" : "milliseconds");
        }
        if (scaled / divisor > max) {
            goto err_range;
        }
        *value_p = (uint64_t)(scaled / divisor);
        return 0;
    }
    return sfs_error_set(-EINVAL, "bad %s '%.40s': unknown unit '%.*s' (%s)", what, text,
                         unit_len > 20 ? 20 : (int)unit_len, unit, unit_help);

err_range:
    return sfs_error_set(-ERANGE, "%s '%.40s' is too large", what, text);
}

int sfs_parse_size(const char *text, uint64_t *bytes_p)
{
    uint64_t bytes;
    int      rc;

    rc = sfs_units_parse(text, sfs_units_size, sizeof(sfs_units_size) / sizeof(sfs_units_size[0]),
                         "size", "like 512K, 4M or 12T; units K, M, G, T, P, E are binary",
                         UINT64_MAX, &bytes);
    if (rc == 0) {
        *bytes_p = bytes;
    }
    return rc;
}

int sfs_parse_duration_ms(const char *text, uint32_t *ms_p)
{
    uint64_t ms;
    int      rc;

    rc = sfs_units_parse(
        text, sfs_units_duration, sizeof(sfs_units_duration) / sizeof(sfs_units_duration[0]),
        "duration", "like 500ms, 30s, 2m, 1h or 1d; a bare number is seconds", UINT32_MAX, &ms);
    if (rc == 0) {
        *ms_p = (uint32_t)ms;
    }
    return rc;
}

const char *sfs_format_size(uint64_t bytes, char *buf, size_t buflen)
{
    static const char unit_letters[] = "KMGTPE";
    unsigned          shift          = 0;
    sfs_u128_t        unit, tenths;

    if (buf == NULL || buflen == 0) {
        return "";
    }
    if (bytes < 1024) {
        snprintf(buf, buflen, "%" PRIu64 "B", bytes);
        return buf;
    }
    shift = 10;
    while (shift < 60 && (bytes >> (shift + 10)) != 0) {
        shift += 10;
    }
    unit   = (sfs_u128_t)1 << shift;
    tenths = ((sfs_u128_t)bytes * 10 + unit / 2) / unit;
    if (tenths < 1000) {
        /* Below 100 units one decimal still says something: "3.4G", "12.0T". */
        snprintf(buf, buflen, "%u.%u%c", (unsigned)(tenths / 10), (unsigned)(tenths % 10),
                 unit_letters[shift / 10 - 1]);
    } else {
        snprintf(buf, buflen, "%" PRIu64 "%c", (uint64_t)((tenths + 5) / 10),
                 unit_letters[shift / 10 - 1]);
    }
    return buf;
}
