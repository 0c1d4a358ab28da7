// floor-read NODE: the kernel's read floor for bench/live. A blocking read(2) loop on an evdev
// node and nothing else: no libevdev, no poll, no output. The kernel's evdev wakes a blocked
// reader as soon as a whole frame (up to its SYN_REPORT) is queued, so every frame wakes it,
// as every frame must wake a reader that detects peaks; what a real reader spends beyond
// this is its own. Counts the events it read and prints the count on SIGTERM (to stderr), so
// the bench can tell that it kept up.
#include <errno.h>
#include <fcntl.h>
#include <linux/input.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t stopping;

static void on_term(int signal_number) {
    (void)signal_number;
    stopping = 1;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: floor-read /dev/input/eventN\n");
        return 64;
    }
    int fd = open(argv[1], O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        fprintf(stderr, "floor-read: %s: %s\n", argv[1], strerror(errno));
        return 66;
    }
    // Without SA_RESTART, SIGTERM interrupts the blocked read and the loop ends.
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = on_term;
    sigaction(SIGTERM, &action, NULL);
    fprintf(stderr, "floor-read: reading %s\n", argv[1]);

    struct input_event events[64];
    unsigned long long count = 0;
    while (!stopping) {
        ssize_t length = read(fd, events, sizeof events);
        if (length < 0) {
            if (errno == EINTR) continue;
            fprintf(stderr, "floor-read: %s: %s\n", argv[1], strerror(errno));
            return 74;
        }
        count += (unsigned long long)length / sizeof events[0];
    }
    fprintf(stderr, "floor-read: %llu events\n", count);
    return 0;
}
