#define _GNU_SOURCE
#include "CFrameRatePosix.h"
#include <errno.h>
#include <pthread.h>
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

int cframerated_accept(int listener) { return accept4(listener, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC); }

int cframerated_gettid(void) { return (int)syscall(SYS_gettid); }

void cframerated_set_thread_name(const char *name) {
    char truncated[16];
    int i = 0;
    for (; i < 15 && name[i]; i++) truncated[i] = name[i];
    truncated[i] = 0;
    pthread_setname_np(pthread_self(), truncated);
}

int cframerated_memfd_create(const char *name) { return memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING); }

int cframerated_memfd_seal(int fd) { return fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL); }
