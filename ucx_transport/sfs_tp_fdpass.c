/*
 * Same-host file handoff: a server gives a process on its host an open
 * file (the storage role: a read-only chunk file, so that the client reads
 * it with pread, one copy from the page cache, and no round trip per read).
 *
 *  - Before asking, the requester listens on an abstract unix stream socket
 *    named after its worker's uuid (the uuid its HELLO announced).
 *  - The server connects to that name and sends the descriptor only if the
 *    process listening there is the one whose pid the session proved
 *    (SO_PEERCRED against the pid proven for direct copies, sfs_tp_direct.c):
 *    a process that took the name first gets nothing.
 *  - The message is a protocol header sealed with the session key, tagged
 *    with the request's id, whose arguments name the file (device, inode):
 *    the requester believes a descriptor only if the MAC, the id and the
 *    file all match (another local process cannot hand it a file of its own).
 * Then the server replies to the request through UCX as usual; the
 * descriptor is already queued on the requester's socket by then.
 */
#define SFS_LOG_FAC "ucx"
#include "sfs_tp_internal.h"

#include "sfs_buf.h"
#include "sfs_errno.h"
#include "sfs_log.h"

#include <inttypes.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define SFS_TP_FD_ARGS 16 /* sfs_fd_handoff_t: u64 device, u64 inode */
#define SFS_TP_FD_MSG  SFS_FD_HANDOFF_MSG_SIZE

/* One message of one iovec and a control buffer. */
static void sfs_tp_fd_msghdr(struct msghdr *mh, struct iovec *iov, void *control, size_t size)
{
    memset(mh, 0, sizeof(*mh));
    mh->msg_iov        = iov;
    mh->msg_iovlen     = 1;
    mh->msg_control    = control;
    mh->msg_controllen = size;
}

int sfs_tp_conn_files_ready(sfs_tp_conn_t *conn)
{
    sfs_tp_worker_t   *worker = conn->worker;
    struct sockaddr_un addr;
    socklen_t          addr_length;
    int                fd;

    if (!conn->direct) {
        return -EOPNOTSUPP; /* not on our host, or no pid proof sent */
    }
    if (worker->files_fd >= 0) {
        return 0;
    }
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        return sfs_error_set(-errno, "cannot create the socket for same-host files: %m");
    }
    addr_length = sfs_tp_unix_name("files", worker->uuid, &addr);
    if (bind(fd, (struct sockaddr *)&addr, addr_length) != 0 || listen(fd, 64) != 0) {
        int rc = -errno;

        close(fd);
        return sfs_error_set(rc, "cannot listen for same-host files: %s", strerror(-rc));
    }
    worker->files_fd = fd;
    return 0;
}

void sfs_tp_files_close(sfs_tp_worker_t *worker)
{
    if (worker->files_fd >= 0) {
        close(worker->files_fd);
        worker->files_fd = -1;
    }
}

int sfs_tp_request_send_fd(sfs_tp_request_t *req, int fd)
{
    sfs_tp_session_t  *session = req->session;
    uint32_t           pid     = __atomic_load_n(&session->direct_pid, __ATOMIC_ACQUIRE);
    uint8_t            msg[SFS_TP_FD_MSG];
    struct sockaddr_un addr;
    struct ucred       cred;
    socklen_t          cred_length = sizeof(cred);
    struct stat        st;
    sfs_proto_hdr_t    hdr;
    sfs_wbuf_t         wb;
    union {
        struct cmsghdr align;
        char           buf[CMSG_SPACE(sizeof(int))];
    } control;
    struct iovec    iov = {.iov_base = msg, .iov_len = sizeof(msg)};
    struct msghdr   mh;
    struct cmsghdr *cmsg;
    int             sock, rc = 0;

    if (!pid) {
        return sfs_error_set(-EPERM, "%s pid %u has not proven its pid on this host",
                             session->peer_host, session->peer_pid);
    }
    if (fstat(fd, &st) != 0) {
        return sfs_error_set(-errno, "fstat: %m");
    }
    sock = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (sock < 0) {
        return sfs_error_set(-errno, "socket: %m");
    }
    if (connect(sock, (struct sockaddr *)&addr,
                sfs_tp_unix_name("files", session->peer_uuid, &addr)) != 0) {
        rc = sfs_error_set(-EAGAIN, "%s pid %u does not listen for files: %m", session->peer_host,
                           pid);
        goto out;
    }
    if (getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &cred, &cred_length) != 0 ||
        (uint32_t)cred.pid != pid) {
        sfs_warn("file handoff refused to %s pid %u (%s): its socket is held by pid %d",
                 session->peer_host, pid, session->peer_program, (int)cred.pid);
        rc = sfs_error_set(-EPERM, "the socket of pid %u is held by another process", pid);
        goto out;
    }
    memset(&hdr, 0, sizeof(hdr));
    hdr.magic       = SFS_PROTO_MAGIC;
    hdr.version     = SFS_PROTO_VERSION;
    hdr.opcode      = req->hdr.opcode;
    hdr.flags       = SFS_PROTO_FLAG_REPLY;
    hdr.args_length = SFS_TP_FD_ARGS;
    hdr.request_id  = req->hdr.request_id;
    hdr.session_id  = session->id;
    hdr.sender      = req->worker->node_id;
    sfs_wbuf_init(&wb, msg + SFS_PROTO_HDR_SIZE, SFS_TP_FD_ARGS);
    sfs_proto_fd_handoff_pack(
        &wb, &(sfs_fd_handoff_t){.device = (uint64_t)st.st_dev, .inode = (uint64_t)st.st_ino});
    sfs_tp_hdr_seal(&hdr, &session->session_key, msg + SFS_PROTO_HDR_SIZE, SFS_TP_FD_ARGS, msg);

    memset(&control, 0, sizeof(control));
    sfs_tp_fd_msghdr(&mh, &iov, control.buf, sizeof(control.buf));
    cmsg             = CMSG_FIRSTHDR(&mh);
    cmsg->cmsg_level = SOL_SOCKET;
    cmsg->cmsg_type  = SCM_RIGHTS;
    cmsg->cmsg_len   = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(cmsg), &fd, sizeof(int));
    if (sendmsg(sock, &mh, MSG_NOSIGNAL) != (ssize_t)sizeof(msg)) {
        rc = sfs_error_set(-EAGAIN, "cannot send a file to %s pid %u: %m", session->peer_host, pid);
    } else {
        __atomic_store_n(&session->files_handed, 1, __ATOMIC_RELAXED);
    }
out:
    close(sock);
    return rc;
}

/* One queued handoff: the descriptor if it is the one for `rpc`, else -1
 * (a leftover of a request that gave up, or not from our server). */
static int sfs_tp_files_take_one(sfs_tp_rpc_t *rpc, int sock)
{
    sfs_tp_conn_t *conn = rpc->conn;
    uint8_t        msg[SFS_TP_FD_MSG + 1];
    union {
        struct cmsghdr align;
        char           buf[CMSG_SPACE(sizeof(int))];
    } control;
    struct iovec     iov = {.iov_base = msg, .iov_len = sizeof(msg)};
    struct msghdr    mh;
    struct cmsghdr  *cmsg;
    sfs_proto_hdr_t  hdr;
    struct stat      st;
    sfs_fd_handoff_t handoff;
    ssize_t          n;
    int              fd = -1;

    sfs_tp_fd_msghdr(&mh, &iov, control.buf, sizeof(control.buf));
    n = recvmsg(sock, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
    for (cmsg = n > 0 ? CMSG_FIRSTHDR(&mh) : NULL; cmsg; cmsg = CMSG_NXTHDR(&mh, cmsg)) {
        if (cmsg->cmsg_level == SOL_SOCKET && cmsg->cmsg_type == SCM_RIGHTS &&
            cmsg->cmsg_len == CMSG_LEN(sizeof(int)) && fd < 0) {
            memcpy(&fd, CMSG_DATA(cmsg), sizeof(int));
        } else if (cmsg->cmsg_level == SOL_SOCKET && cmsg->cmsg_type == SCM_RIGHTS) {
            /* more descriptors than one: close them all */
            size_t count = (cmsg->cmsg_len - CMSG_LEN(0)) / sizeof(int);

            for (size_t i = 0; i < count; i++) {
                int extra;

                memcpy(&extra, CMSG_DATA(cmsg) + i * sizeof(int), sizeof(int));
                close(extra);
            }
        }
    }
    if (fd < 0) {
        return -1;
    }
    if (n < 0 || (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) ||
        sfs_proto_fd_handoff_msg_unpack(msg, (size_t)n, &hdr, &handoff) != 0 ||
        hdr.request_id != rpc->request_id || hdr.session_id != conn->session_id ||
        sfs_auth_mac_check(&conn->session_key, msg, msg + SFS_PROTO_HDR_SIZE, SFS_TP_FD_ARGS) !=
            0 ||
        fstat(fd, &st) != 0 || (uint64_t)st.st_dev != handoff.device ||
        (uint64_t)st.st_ino != handoff.inode) {
        sfs_debug("%s: dropped a file handoff that is not the one for request %" PRIu64, conn->name,
                  rpc->request_id);
        close(fd);
        return -1;
    }
    return fd;
}

int sfs_tp_rpc_take_fd(sfs_tp_rpc_t *rpc, int *fd_p)
{
    sfs_tp_worker_t *worker = rpc->worker;

    if (worker->files_fd < 0) {
        return sfs_error_set(-EBADF, "no socket for same-host files");
    }
    /* handoffs for requests that gave up may be queued before ours */
    for (;;) {
        int sock = accept4(worker->files_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        int fd;

        if (sock < 0) {
            return sfs_error_set(-EPROTO, "%s said it sent a file, but none came", rpc->conn->name);
        }
        fd = sfs_tp_files_take_one(rpc, sock);
        close(sock);
        if (fd >= 0) {
            *fd_p = fd;
            return 0;
        }
    }
}
