/*
 * Bootstrap: a server hands its UCX worker address to whoever connects to
 * its bootstrap TCP port, so that a client knowing only "host:port" can then
 * connect by worker address (and get shared memory on the same host). The
 * address is not a secret; authentication happens over UCX afterwards.
 *
 * Message: "SFSB" | u32 address length (little endian) | address bytes
 * (sfs_proto_address.h).
 */
#define SFS_LOG_FAC "ucx"
#include "sfs_tp_internal.h"

#include "sfs_errno.h"
#include "sfs_log.h"
#include "sfs_time.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define SFS_TP_BOOTSTRAP_MAGIC "SFSB"

int sfs_tp_bootstrap_listen(sfs_tp_worker_t *worker, uint16_t port)
{
    struct sockaddr_in6 addr;
    int                 fd, one = 1, zero = 0, rc;

    fd = socket(AF_INET6, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        rc = -errno;
        return sfs_error_set(rc, "cannot create the bootstrap socket: %s", strerror(-rc));
    }
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero)); /* IPv4 too */
    memset(&addr, 0, sizeof(addr));
    addr.sin6_family = AF_INET6;
    addr.sin6_addr   = in6addr_any;
    addr.sin6_port   = htons(port);
    if (bind(fd, (struct sockaddr *)&addr, sizeof(addr)) != 0 || listen(fd, 128) != 0) {
        rc = -errno;
        close(fd);
        return sfs_error_set(rc, "cannot listen on bootstrap port %u: %s%s", port, strerror(-rc),
                             rc == -EADDRINUSE ? " (is another stripefs service running?)" : "");
    }
    worker->bootstrap_fd   = fd;
    worker->bootstrap_port = port;
    sfs_debug("bootstrap listening on port %u", port);
    return 0;
}

void sfs_tp_bootstrap_accept(sfs_tp_worker_t *worker)
{
    for (;;) {
        uint8_t  header[8];
        uint32_t length = (uint32_t)worker->address_length;
        int      fd     = accept4(worker->bootstrap_fd, NULL, NULL, SOCK_CLOEXEC);
        int      flags;

        if (fd < 0) {
            if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
                sfs_warn("bootstrap accept failed: %m");
            }
            return;
        }
        /* the reply is small: a blocking send with a short timeout is fine */
        flags = fcntl(fd, F_GETFL);
        fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
        {
            struct timeval tv = {.tv_sec = 1};

            setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
        }
        memcpy(header, SFS_TP_BOOTSTRAP_MAGIC, 4);
        for (int i = 0; i < 4; i++) {
            header[4 + i] = (uint8_t)(length >> (8 * i));
        }
        if (send(fd, header, sizeof(header), MSG_NOSIGNAL) != sizeof(header) ||
            send(fd, worker->address, worker->address_length, MSG_NOSIGNAL) !=
                (ssize_t)worker->address_length) {
            sfs_debug("bootstrap: could not send the address to a peer: %m");
        }
        close(fd);
    }
}

void sfs_tp_bootstrap_close(sfs_tp_worker_t *worker)
{
    if (worker->bootstrap_fd >= 0) {
        close(worker->bootstrap_fd);
        worker->bootstrap_fd = -1;
    }
}

static int sfs_tp_recv_all(int fd, void *buf, size_t length, uint64_t deadline_ms)
{
    size_t done = 0;

    while (done < length) {
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        uint64_t      now = sfs_time_ms();
        ssize_t       got;

        if (now >= deadline_ms) {
            return -ETIMEDOUT;
        }
        if (poll(&pfd, 1, (int)(deadline_ms - now)) <= 0) {
            continue;
        }
        got = recv(fd, (uint8_t *)buf + done, length - done, 0);
        if (got < 0) {
            if (errno == EINTR || errno == EAGAIN) {
                continue;
            }
            return -errno;
        }
        if (got == 0) {
            return -ECONNRESET;
        }
        done += (size_t)got;
    }
    return 0;
}

/* The listener is on the host whose bootstrap port we just reached: where
 * it says to connect becomes the address we reached it at, which is known
 * to work from here (a host with several networks publishes one). */
static void sfs_tp_bootstrap_reached_at(const struct addrinfo *ai, uint8_t *address, size_t length)
{
    sfs_peer_address_t peer;

    if (ai->ai_family == AF_INET &&
        sfs_peer_address_unpack(address, length, "management", &peer) == 0 &&
        peer.family == SFS_PEER_ADDRESS_IPV4) {
        memcpy(address + SFS_PEER_ADDRESS_IPV4_AT,
               &((const struct sockaddr_in *)ai->ai_addr)->sin_addr, 4);
    }
}

int sfs_tp_bootstrap_fetch(const char *host, uint16_t port, uint32_t timeout_ms, void **address_p,
                           size_t *length_p)
{
    struct addrinfo  hints = {.ai_socktype = SOCK_STREAM, .ai_family = AF_UNSPEC};
    struct addrinfo *res, *ai;
    uint64_t         deadline = sfs_time_ms() + timeout_ms;
    char             service[16];
    int              rc, last_rc = -ECONNREFUSED;

    snprintf(service, sizeof(service), "%u", port);
    rc = getaddrinfo(host, service, &hints, &res);
    if (rc != 0) {
        return sfs_error_set(-EHOSTUNREACH, "cannot resolve management host '%s': %s", host,
                             gai_strerror(rc));
    }
    for (ai = res; ai; ai = ai->ai_next) {
        uint8_t   header[8];
        uint32_t  length = 0;
        uint8_t  *address;
        int       fd     = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        int       err    = 0;
        socklen_t errlen = sizeof(err);

        if (fd < 0) {
            last_rc = -errno;
            continue;
        }
        if (connect(fd, ai->ai_addr, ai->ai_addrlen) != 0 && errno != EINPROGRESS) {
            last_rc = -errno;
            close(fd);
            continue;
        }
        {
            struct pollfd pfd = {.fd = fd, .events = POLLOUT};
            uint64_t      now = sfs_time_ms();

            if (now >= deadline || poll(&pfd, 1, (int)(deadline - now)) <= 0) {
                last_rc = -ETIMEDOUT;
                close(fd);
                continue;
            }
        }
        if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &errlen) != 0 || err != 0) {
            last_rc = err ? -err : -errno;
            close(fd);
            continue;
        }
        rc = sfs_tp_recv_all(fd, header, sizeof(header), deadline);
        if (rc == 0 && memcmp(header, SFS_TP_BOOTSTRAP_MAGIC, 4) != 0) {
            rc = -EPROTO;
        }
        if (rc == 0) {
            for (int i = 3; i >= 0; i--) {
                length = (length << 8) | header[4 + i];
            }
            if (length == 0 || length > SFS_ADDRESS_MAX) {
                rc = -EPROTO;
            }
        }
        if (rc) {
            last_rc = rc;
            close(fd);
            continue;
        }
        address = malloc(length);
        if (!address) {
            close(fd);
            freeaddrinfo(res);
            return -ENOMEM;
        }
        rc = sfs_tp_recv_all(fd, address, length, deadline);
        close(fd);
        if (rc) {
            free(address);
            last_rc = rc;
            continue;
        }
        sfs_tp_bootstrap_reached_at(ai, address, length);
        freeaddrinfo(res);
        *address_p = address;
        *length_p  = length;
        return 0;
    }
    freeaddrinfo(res);
    return sfs_error_set(last_rc, "cannot reach the stripefs management service at %s:%u: %s%s",
                         host, port, sfs_strerror(last_rc),
                         last_rc == -ECONNREFUSED ? " (is the service running? "
                                                    "start it with stripefs-service)"
                         : last_rc == -EPROTO     ? " (that port is not a stripefs service)"
                                                  : "");
}
