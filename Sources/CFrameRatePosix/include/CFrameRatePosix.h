// The Linux calls framerated's raw I/O layer (FrameRatePosix) needs, as plain functions:
// Swift's Glibc module does not import <sys/epoll.h>, <sys/timerfd.h> or <sys/eventfd.h>,
// struct epoll_event is packed on x86_64, and accept4 and gettid are GNU extensions.
// Only FrameRatePosix imports this module.
#ifndef C_FRAMERATE_POSIX_H
#define C_FRAMERATE_POSIX_H

#include <stdint.h>

/// Readiness bits reported by cframerated_epoll_wait (the EPOLL* values).
extern const uint32_t cframerated_epoll_in;
extern const uint32_t cframerated_epoll_out;
extern const uint32_t cframerated_epoll_err;
extern const uint32_t cframerated_epoll_hup;
extern const uint32_t cframerated_epoll_rdhup;
extern const uint32_t cframerated_epoll_oneshot;
extern const uint32_t cframerated_epoll_edge;

/// A new epoll instance (close-on-exec), or -1 with errno set.
int cframerated_epoll_create(void);

/// Adds `fd` with `events` and the 64-bit `token` reported back by wait; 0 or -1 with errno.
int cframerated_epoll_add(int epfd, int fd, uint32_t events, uint64_t token);

/// Changes the events and token of a watched `fd`; 0 or -1 with errno.
int cframerated_epoll_modify(int epfd, int fd, uint32_t events, uint64_t token);

/// Stops watching `fd`; 0 or -1 with errno set.
int cframerated_epoll_remove(int epfd, int fd);

/// Waits up to `timeout_ms` (-1: forever, 0: poll) for at most `capacity` events; writes each
/// event's token and readiness bits. Returns the count, or -1 with errno set.
int cframerated_epoll_wait(int epfd, uint64_t *tokens, uint32_t *events, int capacity, int timeout_ms);

/// A non-blocking, close-on-exec CLOCK_MONOTONIC timerfd, or -1 with errno set.
int cframerated_timerfd_create(void);

/// Arms `fd` to expire once at the absolute CLOCK_MONOTONIC time `deadline_ns` (0 disarms).
int cframerated_timerfd_arm(int fd, int64_t deadline_ns);

/// A non-blocking, close-on-exec eventfd, or -1 with errno set.
int cframerated_eventfd_create(void);

/// Adds one to an eventfd's counter (wakes its waiter); 0 or -1 with errno set.
int cframerated_eventfd_signal(int fd);

/// Reads and clears a timerfd's or eventfd's counter; the value, or 0 if none was pending.
uint64_t cframerated_counter_drain(int fd);

/// accept4 with SOCK_NONBLOCK | SOCK_CLOEXEC: no window in which the descriptor lacks either.
int cframerated_accept(int listener);

/// The calling thread's kernel id.
int cframerated_gettid(void);

/// Names the calling thread (at most 15 bytes are kept), for top -H and perf.
void cframerated_set_thread_name(const char *name);

/* A close-on-exec, sealable memory file (memfd_create(2)); -1 and errno on failure. */
int cframerated_memfd_create(const char *name);

/* Seals a memory file against any further change (F_ADD_SEALS); -1 and errno on failure. */
int cframerated_memfd_seal(int fd);

#endif
