/*
 * Payload pieces as UCX is given them. UCX moves a single contiguous buffer
 * by zero-copy rendezvous, but an iov of several pieces through its bounce
 * buffers: copied, and over TCP in segments of UCX_TCP_SEG_SIZE (8 KiB). A
 * write of one user buffer that spans several chunks of a target arrives
 * here as one piece per chunk, following each other in memory; sent as they
 * were, writes through the server ran at a quarter of `ucx_perftest -e`
 * over TCP (benchmarks/README.md, ucx.sh). So pieces are joined first.
 */
#ifndef SFS_TP_IOV_H
#define SFS_TP_IOV_H

#include <stddef.h>
#include <sys/uio.h>
#include <ucp/api/ucp.h>

/* Whether a piece at base starts where `piece` ends: the two are one. */
static inline int sfs_tp_iov_follows(const ucp_dt_iov_t *piece, const void *base)
{
    return (const char *)piece->buffer + piece->length == (const char *)base;
}

/* Copy the count pieces of iov into out (room for count entries), dropping
 * empty pieces and joining each piece that starts where the one before it
 * ends; returns how many entries were written. The bytes they name, in
 * order, are exactly those of iov. */
size_t sfs_tp_iov_coalesce(const struct iovec *iov, size_t count, ucp_dt_iov_t *out);

#endif
