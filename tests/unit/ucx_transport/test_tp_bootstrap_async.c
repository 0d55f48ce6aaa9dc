/* The bootstrap question asked in the background
 * (ucx_transport/sfs_tp_bootstrap_async.c), against real TCP sockets on
 * loopback: a server that never answers leaves the fetch in progress (the
 * caller is not held) until it times out with a message naming host:port;
 * one that answers gives its address; a port nobody listens on is refused;
 * a fetch cancelled while it waits frees itself when its thread ends
 * (AddressSanitizer's leak check in the sanitizer pass sees it). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "sfs_errno.h"
#include "sfs_tp.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* A listening socket on 127.0.0.1 that accepts nothing by itself. */
static int listen_loopback(uint16_t *port_p)
{
    struct sockaddr_in addr = {.sin_family = AF_INET};
    socklen_t          len  = sizeof(addr);
    int                fd   = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

    assert_true(fd >= 0);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(fd, (struct sockaddr *)&addr, sizeof(addr)), 0);
    assert_int_equal(listen(fd, 4), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&addr, &len), 0);
    *port_p = ntohs(addr.sin_port);
    return fd;
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};

    nanosleep(&ts, NULL);
}

/* Poll until the fetch ends (at most 60 s: far past any timeout here). */
static int poll_until_done(sfs_tp_bootstrap_async_t *fetch, void **address, size_t *length)
{
    for (int i = 0; i < 1200; i++) {
        int rc = sfs_tp_bootstrap_fetch_poll(fetch, address, length);

        if (rc != -EINPROGRESS) {
            return rc;
        }
        sleep_ms(50);
    }
    fail_msg("the background fetch never ended");
    return 0;
}

static void test_silent_server(void **state)
{
    sfs_tp_bootstrap_async_t *fetch;
    uint16_t                  port;
    int                       fd      = listen_loopback(&port);
    void                     *address = NULL;
    size_t                    length  = 0;
    char                      where[32];

    (void)state;
    assert_int_equal(sfs_tp_bootstrap_fetch_start("127.0.0.1", port, 500, &fetch), 0);
    /* the server never writes: the answer cannot be in */
    assert_int_equal(sfs_tp_bootstrap_fetch_poll(fetch, &address, &length), -EINPROGRESS);
    assert_int_equal(poll_until_done(fetch, &address, &length), -ETIMEDOUT);
    assert_null(address);
    snprintf(where, sizeof(where), "127.0.0.1:%u", port);
    assert_non_null(strstr(sfs_error_detail(), where));
    close(fd);
}

static void test_answering_server(void **state)
{
    static const char         answer[] = "SFSB\x0b\x00\x00\x00worker-addr";
    sfs_tp_bootstrap_async_t *fetch;
    uint16_t                  port;
    int                       fd      = listen_loopback(&port), conn;
    void                     *address = NULL;
    size_t                    length  = 0;

    (void)state;
    assert_int_equal(sfs_tp_bootstrap_fetch_start("127.0.0.1", port, 10000, &fetch), 0);
    conn = accept(fd, NULL, NULL);
    assert_true(conn >= 0);
    assert_int_equal(write(conn, answer, sizeof(answer) - 1), (ssize_t)(sizeof(answer) - 1));
    assert_int_equal(poll_until_done(fetch, &address, &length), 0);
    assert_int_equal(length, 11);
    assert_memory_equal(address, "worker-addr", 11);
    free(address);
    close(conn);
    close(fd);
}

static void test_refused(void **state)
{
    sfs_tp_bootstrap_async_t *fetch;
    uint16_t                  port;
    int                       fd      = listen_loopback(&port);
    void                     *address = NULL;
    size_t                    length  = 0;

    (void)state;
    close(fd); /* nobody listens there now */
    assert_int_equal(sfs_tp_bootstrap_fetch_start("127.0.0.1", port, 10000, &fetch), 0);
    assert_int_equal(poll_until_done(fetch, &address, &length), -ECONNREFUSED);
    assert_non_null(strstr(sfs_error_detail(), "is the service running"));
}

static void test_cancel_while_waiting(void **state)
{
    sfs_tp_bootstrap_async_t *fetch;
    uint16_t                  port;
    int                       fd = listen_loopback(&port);

    (void)state;
    assert_int_equal(sfs_tp_bootstrap_fetch_start("127.0.0.1", port, 200, &fetch), 0);
    sfs_tp_bootstrap_fetch_cancel(fetch); /* returns at once; the thread frees it */
    sleep_ms(1000);                       /* past its timeout: the thread has ended */
    close(fd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_silent_server),
        cmocka_unit_test(test_answering_server),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_cancel_while_waiting),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
