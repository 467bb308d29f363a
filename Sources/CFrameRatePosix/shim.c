#define _GNU_SOURCE
#include "CFrameRatePosix.h"
#include <errno.h>
#include <liburing.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <unistd.h>
#include <fcntl.h>

const uint32_t cframerated_epoll_in = EPOLLIN;
const uint32_t cframerated_epoll_out = EPOLLOUT;
const uint32_t cframerated_epoll_err = EPOLLERR;
const uint32_t cframerated_epoll_hup = EPOLLHUP;
const uint32_t cframerated_epoll_rdhup = EPOLLRDHUP;
const uint32_t cframerated_epoll_oneshot = EPOLLONESHOT;
const uint32_t cframerated_epoll_edge = EPOLLET;

int cframerated_epoll_create(void) { return epoll_create1(EPOLL_CLOEXEC); }

int cframerated_epoll_add(int epfd, int fd, uint32_t events, uint64_t token) {
    struct epoll_event event = {.events = events, .data = {.u64 = token}};
    return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &event);
}

int cframerated_epoll_modify(int epfd, int fd, uint32_t events, uint64_t token) {
    struct epoll_event event = {.events = events, .data = {.u64 = token}};
    return epoll_ctl(epfd, EPOLL_CTL_MOD, fd, &event);
}

int cframerated_epoll_remove(int epfd, int fd) {
    struct epoll_event event = {0};
    return epoll_ctl(epfd, EPOLL_CTL_DEL, fd, &event);
}

int cframerated_epoll_wait(int epfd, uint64_t *tokens, uint32_t *events, int capacity, int timeout_ms) {
    struct epoll_event ready[64];
    if (capacity > 64) capacity = 64;
    int count = epoll_wait(epfd, ready, capacity, timeout_ms);
    for (int i = 0; i < count; i++) {
        tokens[i] = ready[i].data.u64;
        events[i] = ready[i].events;
    }
    return count;
}

int cframerated_timerfd_create(void) { return timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC); }

int cframerated_timerfd_arm(int fd, int64_t deadline_ns) {
    struct itimerspec spec = {0};
    if (deadline_ns > 0) {
        spec.it_value.tv_sec = deadline_ns / 1000000000;
        spec.it_value.tv_nsec = deadline_ns % 1000000000;
    }
    return timerfd_settime(fd, deadline_ns > 0 ? TFD_TIMER_ABSTIME : 0, &spec, NULL);
}

int cframerated_eventfd_create(void) { return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC); }

int cframerated_eventfd_signal(int fd) {
    uint64_t one = 1;
    for (;;) {
        ssize_t written = write(fd, &one, sizeof one);
        if (written == (ssize_t)sizeof one) return 0;
        if (written < 0 && errno == EINTR) continue;
        // EAGAIN: the counter is saturated, so the waiter is awake anyway.
        return written < 0 && errno == EAGAIN ? 0 : -1;
    }
}

uint64_t cframerated_counter_drain(int fd) {
    uint64_t value = 0;
    for (;;) {
        ssize_t got = read(fd, &value, sizeof value);
        if (got == (ssize_t)sizeof value) return value;
        if (got < 0 && errno == EINTR) continue;
        return 0;
    }
}

long cframerated_send_nonblocking(int fd, const void *bytes, size_t count) {
    long sent = syscall(SYS_sendto, fd, bytes, count, MSG_DONTWAIT | MSG_NOSIGNAL, NULL, 0);
    return sent < 0 ? -(long)errno : sent;
}

int cframerated_accept(int listener) { return accept4(listener, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC); }

int cframerated_gettid(void) { return (int)syscall(SYS_gettid); }

void cframerated_set_thread_name(const char *name) {
    char truncated[16];
    int i = 0;
    for (; i < 15 && name[i]; i++) truncated[i] = name[i];
    truncated[i] = 0;
    pthread_setname_np(pthread_self(), truncated);
}

struct cframerated_send_ring {
    struct io_uring ring;
    unsigned entries;
    unsigned files;
};

cframerated_send_ring *cframerated_send_ring_create(unsigned entries, unsigned files) {
    cframerated_send_ring *ring = calloc(1, sizeof *ring);
    if (ring == NULL) { errno = ENOMEM; return NULL; }
    // SUBMIT_ALL: one failing send does not stop the rest of the batch from being submitted.
    // COOP_TASKRUN: no inter-processor interrupt to run completions; the sends complete inline.
    struct io_uring_params params = {.flags = IORING_SETUP_SUBMIT_ALL | IORING_SETUP_COOP_TASKRUN};
    int result = io_uring_queue_init_params(entries, &ring->ring, &params);
    if (result == -EINVAL) {
        // A kernel older than these flags (5.18 / 5.19): the plain ring works the same, a little slower.
        struct io_uring_params plain = {0};
        result = io_uring_queue_init_params(entries, &ring->ring, &plain);
    }
    if (result < 0) { free(ring); errno = -result; return NULL; }
    ring->entries = params.sq_entries ? params.sq_entries : entries;
    if (files > 0 && io_uring_register_files_sparse(&ring->ring, files) == 0) ring->files = files;
    return ring;
}

unsigned cframerated_send_ring_files(const cframerated_send_ring *ring) { return ring->files; }

int cframerated_send_ring_fd(const cframerated_send_ring *ring) { return ring->ring.ring_fd; }

int cframerated_send_ring_set_file(cframerated_send_ring *ring, unsigned slot, int32_t fd) {
    if (slot >= ring->files) return -EINVAL;
    int result = io_uring_register_files_update(&ring->ring, slot, &fd, 1);
    return result < 0 ? result : 0;
}

void cframerated_send_ring_destroy(cframerated_send_ring *ring) {
    if (ring == NULL) return;
    io_uring_queue_exit(&ring->ring);
    free(ring);
}

int cframerated_send_ring_send_all(cframerated_send_ring *ring, cframerated_send *sends, const uint8_t *base, uint32_t count) {
    const int32_t unknown = INT32_MIN + 1;
    uint32_t next = 0;
    while (next < count) {
        uint32_t queued = 0;
        while (next + queued < count && queued < ring->entries) {
            struct io_uring_sqe *sqe = io_uring_get_sqe(&ring->ring);
            if (sqe == NULL) break;
            uint32_t index = next + queued;
            sends[index].result = unknown;
            io_uring_prep_send(sqe, sends[index].fd, base + sends[index].offset, sends[index].length, MSG_DONTWAIT | MSG_NOSIGNAL);
            if (sends[index].fixed) sqe->flags |= IOSQE_FIXED_FILE;
            io_uring_sqe_set_data64(sqe, index);
            queued += 1;
        }
        uint32_t completed = 0;
        while (completed < queued) {
            // Submits what is queued (the first time round) and waits for a completion; the
            // non-blocking sends have all completed inline by the time it returns.
            int entered = io_uring_submit_and_wait(&ring->ring, 1);
            if (entered == -EINTR) continue;
            if (entered < 0) {
                // The ring failed: a send whose outcome is unknown counts as failed (its
                // connection is closed), never as unsent (that could repeat bytes); one of a
                // later chunk never reached the ring, and the caller may send it otherwise.
                for (uint32_t index = next; index < count; index++) {
                    if (index >= next + queued) sends[index].result = CFRAMERATED_SEND_NOT_SUBMITTED;
                    else if (sends[index].result == unknown) sends[index].result = -ECANCELED;
                }
                return entered;
            }
            struct io_uring_cqe *cqe;
            while (io_uring_peek_cqe(&ring->ring, &cqe) == 0) {
                uint64_t index = io_uring_cqe_get_data64(cqe);
                if (index >= next && index < next + queued) sends[index].result = cqe->res;
                io_uring_cqe_seen(&ring->ring, cqe);
                completed += 1;
            }
        }
        next += queued;
    }
    return 0;
}
int cframerated_memfd_create(const char *name) { return memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING); }

int cframerated_memfd_seal(int fd) { return fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL); }

static _Atomic int signal_forward_fd = -1;

static void forward_signal(int signo) {
    int saved = errno;
    int fd = signal_forward_fd;
    if (fd >= 0) {
        unsigned char number = (unsigned char)signo;
        ssize_t ignored = write(fd, &number, 1);  // async-signal-safe; EAGAIN: already plenty queued
        (void)ignored;
    }
    errno = saved;
}

int cframerated_signals_forward(const int *signals, int count, int fd) {
    signal_forward_fd = fd;
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = forward_signal;
    action.sa_flags = SA_RESTART;
    sigfillset(&action.sa_mask);
    for (int i = 0; i < count; i++) {
        if (signals[i] <= 0 || signals[i] > 255) {
            errno = EINVAL;
            return -1;
        }
        if (sigaction(signals[i], &action, NULL) != 0) return -1;
    }
    return 0;
}

void cframerated_signals_stop_forwarding(void) { signal_forward_fd = -1; }

int cframerated_pipe(int fds[2]) { return pipe2(fds, O_CLOEXEC | O_NONBLOCK); }

// Declared by the Swift runtime (libswift_Concurrency); see the header.
extern void *swift_task_enqueueGlobal_hook;

void cframerated_set_global_enqueue_hook(void *hook) { swift_task_enqueueGlobal_hook = hook; }
