/*
 * listening_floor.c: a control for the C fan-out floor's reader, preloaded into the floor
 * (LD_PRELOAD) by Tests/Benchmarks/run.sh. Not part of framerated.
 *
 * The floor's server only writes: its ends of the socket pairs sit in no epoll set. A
 * daemon that takes requests on the connections it ticks on must watch them for input,
 * and a watched socket has an entry in its wait queue. Each time a reader consumes a line,
 * the kernel frees the line's buffer against the sender's socket (sock_wfree) and, the
 * socket being writable again, walks that queue (unix_write_space -> ep_poll_callback),
 * on the reader's CPU. Beside the floor's server, whose socket ends have no waiter, the
 * reader pays for the call only; beside a server that listens, for the callbacks too.
 *
 * This library makes the floor's server listen, and changes nothing else: every socket
 * pair's first end (the floor keeps sv[0] for its server, sv[1] for the readers; run.sh
 * checks the floor's source for that) also joins one epoll set, watched for input and
 * hang-up, which nobody ever waits on. The readers' ends and the floor's own code are
 * untouched. Beside the plain floor in the same round, it measures what listening costs
 * the reader, and so how much of framebench's receive cost is the daemon under test
 * listening rather than the generator's own code.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/socket.h>

static int listening_set = -1;

int socketpair(int domain, int type, int protocol, int sv[2]) {
    static int (*real_socketpair)(int, int, int, int[2]);
    if (!real_socketpair) {
        real_socketpair = (int (*)(int, int, int, int[2]))dlsym(RTLD_NEXT, "socketpair");
        if (!real_socketpair) { fprintf(stderr, "listening_floor: no socketpair to wrap\n"); abort(); }
    }
    int result = real_socketpair(domain, type, protocol, sv);
    if (result != 0) return result;
    if (listening_set < 0 && (listening_set = epoll_create1(EPOLL_CLOEXEC)) < 0) {
        perror("listening_floor: epoll_create1");
        abort();
    }
    struct epoll_event event = {.events = EPOLLIN | EPOLLRDHUP};
    if (epoll_ctl(listening_set, EPOLL_CTL_ADD, sv[0], &event) != 0) {
        perror("listening_floor: epoll_ctl");
        abort();
    }
    return 0;
}
