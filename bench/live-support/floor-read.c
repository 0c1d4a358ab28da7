// floor-read NODE: the kernel's read floor for bench/live. A blocking read(2) loop on an evdev
// node and nothing else: no libevdev, no poll, no output. The kernel's evdev wakes a blocked
// reader as soon as a whole frame (up to its SYN_REPORT) is queued, so every frame wakes it,
// as every frame must wake a reader that detects peaks; what a real reader spends beyond
// this is its own. Counts the events it read and prints the count on SIGTERM (to stderr), so
// the bench can tell that it kept up.
//
// floor-read --epoll NODE: the same reader with the system calls of an event loop: the node
// non-blocking in an epoll set, one epoll_wait and one read per wake-up, as forcescale's loop
// makes them. What a reader spends beyond this is its own work, not its loop's shape.
#include <errno.h>
#include <fcntl.h>
#include <linux/input.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

static volatile sig_atomic_t stopping;

static void on_term(int signal_number) {
    (void)signal_number;
    stopping = 1;
}

int main(int argc, char **argv) {
    int use_epoll = argc == 3 && strcmp(argv[1], "--epoll") == 0;
    if (argc != 2 && !use_epoll) {
        fprintf(stderr, "usage: floor-read [--epoll] /dev/input/eventN\n");
        return 64;
    }
    const char *node = argv[argc - 1];
    int fd = open(node, O_RDONLY | O_CLOEXEC | (use_epoll ? O_NONBLOCK : 0));
    if (fd < 0) {
        fprintf(stderr, "floor-read: %s: %s\n", node, strerror(errno));
        return 66;
    }
    int epoll = -1;
    if (use_epoll) {
        struct epoll_event watched = {.events = EPOLLIN, .data.fd = fd};
        epoll = epoll_create1(EPOLL_CLOEXEC);
        if (epoll < 0 || epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &watched) < 0) {
            fprintf(stderr, "floor-read: epoll: %s\n", strerror(errno));
            return 71;
        }
    }
    // Without SA_RESTART, SIGTERM interrupts the blocked read or epoll_wait and the loop ends.
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = on_term;
    sigaction(SIGTERM, &action, NULL);
    fprintf(stderr, "floor-read: reading %s%s\n", node, use_epoll ? " (epoll)" : "");

    struct input_event events[64];
    unsigned long long count = 0;
    while (!stopping) {
        if (use_epoll) {
            struct epoll_event ready;
            if (epoll_wait(epoll, &ready, 1, -1) < 0) {
                if (errno == EINTR) continue;
                fprintf(stderr, "floor-read: epoll_wait: %s\n", strerror(errno));
                return 74;
            }
        }
        ssize_t length = read(fd, events, sizeof events);
        if (length < 0) {
            if (errno == EINTR || errno == EAGAIN) continue;
            fprintf(stderr, "floor-read: %s: %s\n", node, strerror(errno));
            return 74;
        }
        count += (unsigned long long)length / sizeof events[0];
    }
    fprintf(stderr, "floor-read: %llu events\n", count);
    return 0;
}
