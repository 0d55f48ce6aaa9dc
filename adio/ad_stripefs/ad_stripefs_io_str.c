/*
 * ad_stripefs: noncontiguous reads and writes as list I/O. The memory
 * datatype becomes a list of memory pieces, the file view a list of file
 * extents, and the client library moves them in one operation: the pieces of
 * each target travel together, all targets at once. No data sieving, so no
 * read-modify-write. In atomic mode the whole extent of the call, from its
 * first byte to its last, is locked around it (exclusive for a write, shared
 * for a read), so a strided write is never interleaved with another
 * process's overlapping one.
 */
#include "ad_stripefs.h"
#include "adioi.h"

#include <errno.h>
#include <stdlib.h>

typedef struct ADIOI_STRIPEFS_lists {
    struct iovec      *memory;
    size_t             memory_count;
    size_t             memory_capacity;
    sfs_file_extent_t *extents;
    size_t             extent_count;
    size_t             extent_capacity;
} ADIOI_STRIPEFS_lists_t;

static int ADIOI_STRIPEFS_add_memory(ADIOI_STRIPEFS_lists_t *lists, char *base, size_t length)
{
    struct iovec *last = lists->memory_count ? &lists->memory[lists->memory_count - 1] : NULL;

    if (length == 0) {
        return 0;
    }
    if (last && (char *)last->iov_base + last->iov_len == base) {
        last->iov_len += length; /* adjacent: one piece */
        return 0;
    }
    if (lists->memory_count == lists->memory_capacity) {
        size_t        capacity = lists->memory_capacity ? 2 * lists->memory_capacity : 64;
        struct iovec *grown    = realloc(lists->memory, capacity * sizeof(*grown));

        if (!grown) {
            return -ENOMEM;
        }
        lists->memory          = grown;
        lists->memory_capacity = capacity;
    }
    lists->memory[lists->memory_count].iov_base  = base;
    lists->memory[lists->memory_count++].iov_len = length;
    return 0;
}

static int ADIOI_STRIPEFS_add_extent(ADIOI_STRIPEFS_lists_t *lists, ADIO_Offset offset,
                                     ADIO_Offset length)
{
    sfs_file_extent_t *last = lists->extent_count ? &lists->extents[lists->extent_count - 1] : NULL;

    if (length <= 0) {
        return 0;
    }
    if (last && last->offset + last->length == (uint64_t)offset) {
        last->length += (uint64_t)length;
        return 0;
    }
    if (lists->extent_count == lists->extent_capacity) {
        size_t             capacity = lists->extent_capacity ? 2 * lists->extent_capacity : 64;
        sfs_file_extent_t *grown    = realloc(lists->extents, capacity * sizeof(*grown));

        if (!grown) {
            return -ENOMEM;
        }
        lists->extents         = grown;
        lists->extent_capacity = capacity;
    }
    lists->extents[lists->extent_count].offset   = (uint64_t)offset;
    lists->extents[lists->extent_count++].length = (uint64_t)length;
    return 0;
}

/* The memory pieces of `count` instances of `datatype` at `buf`. */
static int ADIOI_STRIPEFS_memory_list(void *buf, int count, MPI_Datatype datatype,
                                      ADIO_Offset bytes, ADIOI_STRIPEFS_lists_t *lists)
{
    ADIOI_Flatlist_node *flat;
    MPI_Aint             lb, extent;
    int                  contig, rc = 0;

    ADIOI_Datatype_iscontig(datatype, &contig);
    if (contig) {
        return ADIOI_STRIPEFS_add_memory(lists, buf, (size_t)bytes);
    }
    MPI_Type_get_extent(datatype, &lb, &extent);
    flat = ADIOI_Flatten_and_find(datatype);
    for (int k = 0; k < count && rc == 0; k++) {
        for (MPI_Count b = 0; b < flat->count && rc == 0; b++) {
            rc = ADIOI_STRIPEFS_add_memory(lists,
                                           (char *)buf + (ADIO_Offset)k * extent + flat->indices[b],
                                           (size_t)flat->blocklens[b]);
        }
    }
    return rc;
}

/* The file extents of `bytes` bytes of the file view, starting at the
 * individual file pointer or at `offset` etypes into the view. */
static int ADIOI_STRIPEFS_file_list(ADIO_File fd, int file_ptr_type, ADIO_Offset offset,
                                    ADIO_Offset bytes, ADIOI_STRIPEFS_lists_t *lists)
{
    ADIOI_Flatlist_node *flat;
    MPI_Count            filetype_size;
    MPI_Aint             lb, extent;
    ADIO_Offset          tile, skip = 0, left = bytes;
    MPI_Count            block = 0;
    int                  contig, rc = 0;

    ADIOI_Datatype_iscontig(fd->filetype, &contig);
    if (contig) {
        ADIO_Offset start = file_ptr_type == ADIO_INDIVIDUAL
                                ? fd->fp_ind
                                : fd->disp + offset * (ADIO_Offset)fd->etype_size;

        return ADIOI_STRIPEFS_add_extent(lists, start, bytes);
    }
    MPI_Type_size_x(fd->filetype, &filetype_size);
    MPI_Type_get_extent(fd->filetype, &lb, &extent);
    flat = ADIOI_Flatten_and_find(fd->filetype);
    if (filetype_size == 0 || extent <= 0) {
        return -EINVAL;
    }
    if (file_ptr_type == ADIO_INDIVIDUAL) {
        /* find the tile and the data block at (or after) the file pointer */
        ADIO_Offset within = fd->fp_ind - fd->disp;

        tile = within >= 0 ? within / extent : 0;
        within -= tile * extent;
        for (block = 0; block < flat->count; block++) {
            if (flat->blocklens[block] > 0 &&
                flat->indices[block] + flat->blocklens[block] > within) {
                break;
            }
        }
        if (block == flat->count) {
            block = 0; /* past the last block: the next tile's first */
            tile++;
        } else if (within > flat->indices[block]) {
            skip = within - flat->indices[block];
        }
    } else {
        /* `offset` counts etypes of data in the view */
        ADIO_Offset data = offset * (ADIO_Offset)fd->etype_size;
        ADIO_Offset seen = 0;

        tile = data / filetype_size;
        data -= tile * filetype_size;
        for (block = 0; block < flat->count; block++) {
            if (seen + flat->blocklens[block] > data) {
                skip = data - seen;
                break;
            }
            seen += flat->blocklens[block];
        }
        if (block == flat->count) {
            block = 0;
            tile++;
        }
    }
    while (left > 0 && rc == 0) {
        ADIO_Offset length = flat->blocklens[block] - skip;

        if (length > left) {
            length = left;
        }
        if (length > 0) {
            rc = ADIOI_STRIPEFS_add_extent(
                lists, fd->disp + tile * extent + flat->indices[block] + skip, length);
            left -= length;
        }
        skip = 0;
        if (++block == flat->count) {
            block = 0;
            tile++;
        }
    }
    return rc;
}

/* Where the individual file pointer lands after `done` bytes of the list. */
static ADIO_Offset ADIOI_STRIPEFS_position_after(const ADIOI_STRIPEFS_lists_t *lists,
                                                 ADIO_Offset done, ADIO_Offset fallback)
{
    ADIO_Offset position = fallback;

    for (size_t i = 0; i < lists->extent_count && done > 0; i++) {
        ADIO_Offset take = (ADIO_Offset)lists->extents[i].length < done
                               ? (ADIO_Offset)lists->extents[i].length
                               : done;

        position = (ADIO_Offset)lists->extents[i].offset + take;
        done -= take;
    }
    return position;
}

/* Lock the extent of the list (atomic mode): from its lowest to its
 * highest byte; *locked_p says whether there was anything to lock. */
static int ADIOI_STRIPEFS_lock_extent(ADIO_File fd, const ADIOI_STRIPEFS_lists_t *lists, int write,
                                      uint64_t *lock_id_p, int *locked_p)
{
    uint64_t first = UINT64_MAX, end = 0;
    int      rc;

    for (size_t i = 0; i < lists->extent_count; i++) {
        const sfs_file_extent_t *extent = &lists->extents[i];

        first = extent->offset < first ? extent->offset : first;
        end   = extent->offset + extent->length > end ? extent->offset + extent->length : end;
    }
    *locked_p = 0;
    if (end <= first) {
        return 0;
    }
    rc        = sfs_file_lock(ADIOI_STRIPEFS_FILE(fd), first, end - first, write, lock_id_p);
    *locked_p = rc == 0;
    return rc;
}

static void ADIOI_STRIPEFS_strided(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                                   int file_ptr_type, ADIO_Offset offset, ADIO_Status *status,
                                   int write, int *error_code)
{
    static const char      myname[] = "ADIOI_STRIPEFS_STRIDED";
    ADIOI_STRIPEFS_lists_t lists    = {0};
    MPI_Count              type_size;
    ADIO_Offset            bytes;
    ssize_t                done    = 0;
    uint64_t               lock_id = 0;
    int                    locked  = 0, rc, unlock_rc;

    MPI_Type_size_x(datatype, &type_size);
    bytes = (ADIO_Offset)type_size * count;
    if (bytes > 0) {
        rc = ADIOI_STRIPEFS_memory_list(buf, count, datatype, bytes, &lists);
        if (rc == 0) {
            rc = ADIOI_STRIPEFS_file_list(fd, file_ptr_type, offset, bytes, &lists);
        }
        if (rc == 0 && fd->atomicity) {
            rc = ADIOI_STRIPEFS_lock_extent(fd, &lists, write, &lock_id, &locked);
        }
        if (rc == 0) {
            done = write ? sfs_file_writev(ADIOI_STRIPEFS_FILE(fd), lists.extents,
                                           lists.extent_count, lists.memory, lists.memory_count)
                         : sfs_file_readv(ADIOI_STRIPEFS_FILE(fd), lists.extents,
                                          lists.extent_count, lists.memory, lists.memory_count);
            rc   = done < 0 ? (int)done : 0;
        }
        /* released once every target acknowledged its pieces */
        if (locked && (unlock_rc = sfs_file_unlock(ADIOI_STRIPEFS_FILE(fd), lock_id)) != 0 &&
            rc == 0) {
            rc = unlock_rc;
        }
        if (rc) {
            *error_code = ADIOI_STRIPEFS_Err(myname, fd->filename, rc);
            goto out;
        }
        if (file_ptr_type == ADIO_INDIVIDUAL) {
            fd->fp_ind = ADIOI_STRIPEFS_position_after(&lists, done, fd->fp_ind);
        }
    }
    fd->fp_sys_posn = -1;
    if (write) {
        fd->dirty_write = 1;
    }
#ifdef HAVE_STATUS_SET_BYTES
    if (status) {
        MPIR_Status_set_bytes(status, datatype, (MPI_Count)done);
    }
#else
    (void)status;
#endif
    *error_code = MPI_SUCCESS;
out:
    free(lists.memory);
    free(lists.extents);
}

void ADIOI_STRIPEFS_ReadStrided(ADIO_File fd, void *buf, int count, MPI_Datatype datatype,
                                int file_ptr_type, ADIO_Offset offset, ADIO_Status *status,
                                int *error_code)
{
    ADIOI_STRIPEFS_strided(fd, buf, count, datatype, file_ptr_type, offset, status, 0, error_code);
}

void ADIOI_STRIPEFS_WriteStrided(ADIO_File fd, const void *buf, int count, MPI_Datatype datatype,
                                 int file_ptr_type, ADIO_Offset offset, ADIO_Status *status,
                                 int *error_code)
{
    ADIOI_STRIPEFS_strided(fd, (void *)buf, count, datatype, file_ptr_type, offset, status, 1,
                           error_code);
}
