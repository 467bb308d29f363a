#include "CLinuxEpoll.h"
#include <errno.h>
#include <sys/epoll.h>

int cframerated_epoll_create(void) { return epoll_create1(EPOLL_CLOEXEC); }

int cframerated_epoll_watch_input(int epfd, int fd) {
    struct epoll_event event = {.events = EPOLLIN | EPOLLRDHUP, .data = {.fd = fd}};
    return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &event);
}

int cframerated_epoll_watch_input_edge(int epfd, int fd) {
    struct epoll_event event = {.events = EPOLLIN | EPOLLRDHUP | EPOLLET, .data = {.fd = fd}};
    return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &event);
}

int cframerated_epoll_unwatch(int epfd, int fd) {
    struct epoll_event event = {0};
    return epoll_ctl(epfd, EPOLL_CTL_DEL, fd, &event);
}

int cframerated_epoll_any_ready(int epfd) {
    struct epoll_event event;
    int ready = epoll_wait(epfd, &event, 1, 0);
    return ready < 0 ? -1 : (ready > 0 ? 1 : 0);
}

int cframerated_epoll_wait_ready(int epfd, int *ready_fds, int capacity, int timeout_ms) {
    struct epoll_event events[256];
    if (capacity > 256) capacity = 256;
    if (capacity < 1) {
        errno = EINVAL;
        return -1;
    }
    int ready = epoll_wait(epfd, events, capacity, timeout_ms);
    for (int i = 0; i < ready; i++) ready_fds[i] = events[i].data.fd;
    return ready;
}
