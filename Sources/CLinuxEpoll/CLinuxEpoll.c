#include "CLinuxEpoll.h"
#include <sys/epoll.h>

int cframerated_epoll_create(void) { return epoll_create1(EPOLL_CLOEXEC); }

int cframerated_epoll_watch_input(int epfd, int fd) {
    struct epoll_event event = {.events = EPOLLIN | EPOLLRDHUP, .data = {.fd = fd}};
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
