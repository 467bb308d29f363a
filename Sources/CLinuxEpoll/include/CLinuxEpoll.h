// The few epoll calls framerated needs, as plain functions: Swift's Glibc module does not
// import <sys/epoll.h>, and struct epoll_event is packed on x86_64.
#ifndef C_LINUX_EPOLL_H
#define C_LINUX_EPOLL_H

/// A new epoll instance (close-on-exec), or -1 with errno set.
int cframerated_epoll_create(void);

/// Watches `fd` for input (level-triggered EPOLLIN | EPOLLRDHUP); 0 or -1 with errno set.
int cframerated_epoll_watch_input(int epfd, int fd);

/// Watches `fd` for input, edge-triggered (EPOLLIN | EPOLLRDHUP | EPOLLET): reported once
/// per arrival of data, so the caller reads until a short read; 0 or -1 with errno set.
int cframerated_epoll_watch_input_edge(int epfd, int fd);

/// Stops watching `fd`; 0 or -1 with errno set.
int cframerated_epoll_unwatch(int epfd, int fd);

/// Whether any watched descriptor is ready now (never blocks): 1, 0, or -1 with errno set.
int cframerated_epoll_any_ready(int epfd);

/// Waits up to `timeout_ms` (-1: no limit) for watched descriptors to be ready and writes
/// up to `capacity` of them (at most 256 per call) to `ready_fds`: the count, 0 on timeout,
/// or -1 with errno set.
int cframerated_epoll_wait_ready(int epfd, int *ready_fds, int capacity, int timeout_ms);

#endif
