// The Linux calls framerated's raw I/O layer (FrameRatePosix) needs, as plain functions:
// Swift's Glibc module does not import <sys/epoll.h>, <sys/timerfd.h> or <sys/eventfd.h>,
// struct epoll_event is packed on x86_64, and accept4 and gettid are GNU extensions.
// Only FrameRatePosix imports this module.
#ifndef C_FRAMERATE_POSIX_H
#define C_FRAMERATE_POSIX_H

#include <stddef.h>
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

/// send(fd, bytes, count, MSG_DONTWAIT | MSG_NOSIGNAL) as the bare system call: the byte
/// count, or a negative errno. glibc's send() is a thread-cancellation point, which in a
/// multi-threaded process brackets every call with two more function calls; framerated
/// never cancels a thread, and the tick plane makes thousands of these calls per vsync.
long cframerated_send_nonblocking(int fd, const void *bytes, size_t count);

/// accept4 with SOCK_NONBLOCK | SOCK_CLOEXEC: no window in which the descriptor lacks either.
int cframerated_accept(int listener);

/// The calling thread's kernel id.
int cframerated_gettid(void);

/// Names the calling thread (at most 15 bytes are kept), for top -H and perf.
void cframerated_set_thread_name(const char *name);

/// An io_uring used to send many buffers to many sockets with one system call (liburing).
typedef struct cframerated_send_ring cframerated_send_ring;

/// A ring of `entries` submission slots with a table of `files` registered-file slots (0:
/// none), or NULL with errno set (ENOSYS: no io_uring in this kernel; EPERM: disabled by
/// sysctl or a seccomp filter; ENOMEM). A kernel that refuses the file table gets a ring
/// without one (`cframerated_send_ring_files` then reports 0).
cframerated_send_ring *cframerated_send_ring_create(unsigned entries, unsigned files);

/// Tears the ring down (NULL is allowed).
void cframerated_send_ring_destroy(cframerated_send_ring *ring);

/// The ring's registered-file slots (0: no table).
unsigned cframerated_send_ring_files(const cframerated_send_ring *ring);

/// Puts `fd` in registered-file slot `slot` (`fd` -1 empties it). The table holds its own
/// reference to the open file until the slot is emptied. Unlike submissions, this may be
/// called from any thread. Returns 0 or a negative errno.
int cframerated_send_ring_set_file(cframerated_send_ring *ring, unsigned slot, int32_t fd);

/// One send of a batch for cframerated_send_ring_send_all. The caller fills `fd` (a
/// registered-file slot when `fixed` is nonzero), `offset` and `length`; the ring writes
/// `result`. `segment` and `gate_word` are the caller's own bookkeeping, carried along
/// untouched so that queueing a send is one append of one record.
typedef struct {
    int32_t fd;
    uint8_t fixed;
    uint32_t offset;
    uint32_t length;
    /// Bytes sent (possibly fewer than `length`), or a negative errno (-EAGAIN: nothing fitted).
    int32_t result;
    uint32_t segment;
    uint64_t gate_word;
} cframerated_send;

/// A `result` of cframerated_send_ring_send_all: the send was never given to the ring
/// (the ring failed before its chunk), so nothing of it was sent and it may be sent otherwise.
static const int32_t CFRAMERATED_SEND_NOT_SUBMITTED = INT32_MIN;

/// The ring's own descriptor (for tests that make its submissions fail).
int cframerated_send_ring_fd(const cframerated_send_ring *ring);

/// Sends `count` buffers, `sends[i].length` bytes at `base + sends[i].offset` to socket
/// `sends[i].fd`, each as one non-blocking `send(MSG_DONTWAIT | MSG_NOSIGNAL)`, submitted in
/// as few `io_uring_enter` calls as the ring's size allows (one per `entries` sends), and
/// waits until every one has completed, which is at once: a non-blocking send completes
/// inline. Sets every `sends[i].result`. Returns 0, or a negative errno if the ring itself
/// failed: then every send whose outcome is unknown is marked -ECANCELED (failed, never
/// "unsent", which could repeat bytes), every send of a later chunk, which never reached the
/// ring, CFRAMERATED_SEND_NOT_SUBMITTED, and the ring must not be submitted to again:
/// requests the kernel had not taken stay in its submission queue, pointing at this call's
/// buffer and descriptors, and the next `io_uring_enter` would send them. Only the thread
/// that owns the ring may call this.
int cframerated_send_ring_send_all(cframerated_send_ring *ring, cframerated_send *sends, const uint8_t *base, uint32_t count);

/* A close-on-exec, sealable memory file (memfd_create(2)); -1 and errno on failure. */
int cframerated_memfd_create(const char *name);

/* Seals a memory file against any further change (F_ADD_SEALS); -1 and errno on failure. */
int cframerated_memfd_seal(int fd);

/* From now on, the `count` signals of `signals` are caught by a handler that writes the
 * signal's number as one byte to `fd` (non-blocking; a full pipe drops it) and returns:
 * the self-pipe pattern, whichever thread the signal interrupts. `fd` must stay open for
 * the rest of the process (a handler may still be writing to it). 0, or -1 with errno. */
int cframerated_signals_forward(const int *signals, int count, int fd);

/* Makes the handler installed by cframerated_signals_forward drop signals from now on. */
void cframerated_signals_stop_forwarding(void);

/* A pipe, both ends close-on-exec and non-blocking: fds[0] reads, fds[1] writes; 0 or -1
 * with errno. */
int cframerated_pipe(int fds[2]);

/* Stores `hook` in the Swift runtime's swift_task_enqueueGlobal_hook: from then on every job
 * for Swift concurrency's global executor goes to `hook` instead of libdispatch. `hook` is
 * a Swift `@convention(thin) (UnownedJob, @convention(thin) (UnownedJob) -> Void) -> Void`.
 * The symbol is referenced at link time rather than looked up with dlsym, which cannot find
 * it in a binary that links the Swift runtime statically. */
void cframerated_set_global_enqueue_hook(void *hook);

#endif
