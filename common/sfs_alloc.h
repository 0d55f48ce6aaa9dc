/*
 * Allocation helpers: zeroed, sized by the pointer's type, and a free that
 * clears the pointer so a second free or a later use fails loudly.
 */
#ifndef SFS_ALLOC_H
#define SFS_ALLOC_H

#include <stdlib.h>

#define SFS_ALLOC_PTR(_p)       ((_p) = calloc(1, sizeof(*(_p))))
#define SFS_ALLOC_ARRAY(_p, _n) ((_p) = calloc((_n) ? (_n) : 1, sizeof(*(_p))))
#define SFS_FREE(_p)                                                                               \
    do {                                                                                           \
        free(_p);                                                                                  \
        (_p) = NULL;                                                                               \
    } while (0)

#define SFS_ARRAY_SIZE(_a) (sizeof(_a) / sizeof((_a)[0]))
#define SFS_MIN(_a, _b)    ((_a) < (_b) ? (_a) : (_b))
#define SFS_MAX(_a, _b)    ((_a) > (_b) ? (_a) : (_b))

/* Bit field-mask helpers for params structs (UCX style): bits never reused. */
#define SFS_BIT(_n) (1ull << (_n))
#define SFS_PARAM_VALUE(_params, _field, _bit, _default)                                           \
    (((_params) != NULL && ((_params)->field_mask & (_bit))) ? (_params)->_field : (_default))

#endif
