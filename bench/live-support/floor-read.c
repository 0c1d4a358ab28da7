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
//
// floor-read --epoll --touch-pages N NODE: that reader, and after each read one byte written
// in each of N pages of its own memory, N * 4 KiB apart: a wake-up that touches N pages more
// than the floor, and does nothing else. Beside forcescale it tells how far the cost of a
// wake-up under emulation follows the pages it touches rather than the instructions it runs.
//
// floor-read --epoll --call-functions N NODE: that reader calling N of 256 distinct small
// functions after each read, packed 16 bytes apart (a page or two of code in all);
// --call-pages N: the same with each function on a page of its own. Under QEMU's TCG each
// call and return enters a translated block through a lookup that, after a context switch,
// misses; the two tell the cost of such a block from that of a code page.
//
// floor-read --epoll --send-lines N NODE: that reader, sending a 190-byte line (a READING's
// size) after every N-th frame over a Unix stream socket to a client process of its own
// (forked at the start; it only reads and discards, and its CPU is not the reader's). With N
// 10 at 1 kHz that is forcescaled's stream to one watcher, 100 lines a second: what serving a
// client costs a reader that does nothing else (the send, and the client woken per line).
#include <errno.h>
#include <fcntl.h>
#include <linux/input.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

// 256 functions each way, made by the preprocessor: packed (aligned to 16 bytes) and spread
// (each aligned to a page of its own).
#define PACKED(i) __attribute__((noinline, aligned(16))) static int packed_##i(int x) { return x * 5 + i; }
#define SPREAD(i) __attribute__((noinline, aligned(4096))) static int spread_##i(int x) { return x * 3 + i; }
#define MAKE4(M, b) M(b##0) M(b##1) M(b##2) M(b##3)
#define MAKE16(M, b) MAKE4(M, b##0) MAKE4(M, b##1) MAKE4(M, b##2) MAKE4(M, b##3)
#define MAKE64(M, b) MAKE16(M, b##0) MAKE16(M, b##1) MAKE16(M, b##2) MAKE16(M, b##3)
#define MAKE256(M) MAKE64(M, 1) MAKE64(M, 2) MAKE64(M, 3) MAKE64(M, 4)
MAKE256(PACKED)
MAKE256(SPREAD)
#define ADDRESS_OF_PACKED(i) packed_##i,
#define ADDRESS_OF_SPREAD(i) spread_##i,
static int (*const packed[256])(int) = {MAKE256(ADDRESS_OF_PACKED)};
static int (*const spread[256])(int) = {MAKE256(ADDRESS_OF_SPREAD)};
static volatile int sink;

static volatile sig_atomic_t stopping;

static void on_term(int signal_number) {
    (void)signal_number;
    stopping = 1;
}

int main(int argc, char **argv) {
    int use_epoll = argc >= 3 && strcmp(argv[1], "--epoll") == 0;
    long touch_pages = 0, calls = 0, send_every = 0;
    int (*const *functions)(int) = NULL;
    if (use_epoll && argc == 5) {
        if (strcmp(argv[2], "--touch-pages") == 0) touch_pages = atol(argv[3]);
        if (strcmp(argv[2], "--call-functions") == 0) functions = packed, calls = atol(argv[3]);
        if (strcmp(argv[2], "--call-pages") == 0) functions = spread, calls = atol(argv[3]);
        if (strcmp(argv[2], "--send-lines") == 0) send_every = atol(argv[3]);
    }
    if (!(argc == 2 || (use_epoll && argc == 3) || (touch_pages > 0 && argc == 5) || (calls > 0 && calls <= 256 && argc == 5)
          || (send_every > 0 && argc == 5))) {
        fprintf(stderr, "usage: floor-read [--epoll [--touch-pages N | --call-functions N | --call-pages N | --send-lines N]] /dev/input/eventN\n"
                        "(N up to 256 for the calls)\n");
        return 64;
    }
    // The client: reads what comes and throws it away, until the reader's end closes.
    int client = -1;
    pid_t client_pid = -1;
    if (send_every > 0) {
        int pair[2];
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) < 0) {
            fprintf(stderr, "floor-read: socketpair: %s\n", strerror(errno));
            return 71;
        }
        client_pid = fork();
        if (client_pid < 0) {
            fprintf(stderr, "floor-read: fork: %s\n", strerror(errno));
            return 71;
        }
        if (client_pid == 0) {
            close(pair[0]);
            char discard[65536];
            while (read(pair[1], discard, sizeof discard) > 0) {}
            _exit(0);
        }
        close(pair[1]);
        client = pair[0];
    }
    char line[190];
    memset(line, 'x', sizeof line);
    line[sizeof line - 1] = '\n';
    unsigned long long frames = 0;
    volatile unsigned char *pages = touch_pages > 0 ? calloc((size_t)touch_pages, 4096) : NULL;
    if (touch_pages > 0 && pages == NULL) {
        fprintf(stderr, "floor-read: no memory for %ld pages\n", touch_pages);
        return 71;
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
    fprintf(stderr, "floor-read: reading %s%s\n", node,
            touch_pages > 0 ? " (epoll, touching pages)" : calls > 0 ? " (epoll, calling functions)"
            : send_every > 0 ? " (epoll, sending lines)" : use_epoll ? " (epoll)" : "");

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
        for (long page = 0; page < touch_pages; page++) pages[page * 4096] += 1;
        int result = 0;
        for (long call = 0; call < calls; call++) result = functions[call](result);
        if (calls > 0) sink = result;
        if (send_every > 0) {
            for (ssize_t index = 0; index < length / (ssize_t)sizeof events[0]; index++) {
                if (events[index].type != EV_SYN || events[index].code != SYN_REPORT) continue;
                if (++frames % (unsigned long long)send_every == 0) send(client, line, sizeof line, MSG_DONTWAIT | MSG_NOSIGNAL);
            }
        }
    }
    if (client >= 0) {
        close(client);
        waitpid(client_pid, NULL, 0);
    }
    fprintf(stderr, "floor-read: %llu events\n", count);
    return 0;
}
