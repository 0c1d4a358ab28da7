// pads-writer N FRAMES RATE_HZ: bench/daemon's live devices (part (4b), in the VM). Creates N
// uinput single-touch pressure pads (ABS_X, ABS_Y, ABS_PRESSURE 0-255, BTN_TOUCH,
// BTN_TOOL_FINGER, BTN_LEFT, INPUT_PROP_POINTER, as the kernel scenarios' pads), puts a finger
// down on each (so a daemon started after this finds the touch in the device's state), prints
// each one's node ("node /dev/input/eventK") and "ready", then waits for SIGUSR1. On it, it
// writes FRAMES frames to each, ABS_PRESSURE + SYN_REPORT in one
// write(2) per pad, all pads at every tick of RATE_HZ, the ticks at absolute CLOCK_MONOTONIC
// deadlines (a late wake-up does not shift the ones after it), SCHED_FIFO 50 when allowed (a
// device's pace is the hardware's, not a process queued behind the readers). Pressures step
// by 7 modulo 221 from 10: a frame always differs from the one before (the input core drops a
// repeated value) and stays far below a PEAK. Then it lifts the fingers, prints how many
// frames a second it held and how late its wake-ups were, and keeps the pads until SIGTERM.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/uinput.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void fail(const char *what) {
    fprintf(stderr, "pads-writer: %s: %s\n", what, strerror(errno));
    exit(1);
}

static void ioctl_or_fail(int fd, unsigned long request, unsigned long argument, const char *what) {
    if (ioctl(fd, request, argument) < 0) fail(what);
}

static void axis(int fd, int code, int maximum) {
    struct uinput_abs_setup setup = {.code = code, .absinfo = {.minimum = 0, .maximum = maximum}};
    ioctl_or_fail(fd, UI_ABS_SETUP, (unsigned long)&setup, "UI_ABS_SETUP");
}

// Creates pad NUMBER; returns its uinput descriptor and writes its event node to NODE.
static int create_pad(int number, char *node, size_t size) {
    int fd = open("/dev/uinput", O_WRONLY | O_CLOEXEC);
    if (fd < 0) fail("open /dev/uinput");
    ioctl_or_fail(fd, UI_SET_EVBIT, EV_KEY, "UI_SET_EVBIT");
    ioctl_or_fail(fd, UI_SET_EVBIT, EV_ABS, "UI_SET_EVBIT");
    ioctl_or_fail(fd, UI_SET_KEYBIT, BTN_LEFT, "UI_SET_KEYBIT");
    ioctl_or_fail(fd, UI_SET_KEYBIT, BTN_TOOL_FINGER, "UI_SET_KEYBIT");
    ioctl_or_fail(fd, UI_SET_KEYBIT, BTN_TOUCH, "UI_SET_KEYBIT");
    ioctl_or_fail(fd, UI_SET_ABSBIT, ABS_X, "UI_SET_ABSBIT");
    ioctl_or_fail(fd, UI_SET_ABSBIT, ABS_Y, "UI_SET_ABSBIT");
    ioctl_or_fail(fd, UI_SET_ABSBIT, ABS_PRESSURE, "UI_SET_ABSBIT");
    ioctl_or_fail(fd, UI_SET_PROPBIT, INPUT_PROP_POINTER, "UI_SET_PROPBIT");
    axis(fd, ABS_X, 1000);
    axis(fd, ABS_Y, 1000);
    axis(fd, ABS_PRESSURE, 255);
    struct uinput_setup setup = {.id = {.bustype = BUS_VIRTUAL, .vendor = 0x1fc9, .product = 0x0040 + number}};
    snprintf(setup.name, sizeof setup.name, "forcescale bench pad %d", number);
    ioctl_or_fail(fd, UI_DEV_SETUP, (unsigned long)&setup, "UI_DEV_SETUP");
    ioctl_or_fail(fd, UI_DEV_CREATE, 0, "UI_DEV_CREATE");
    // The event node: /sys/devices/virtual/input/<sysname>/eventK, waited for (udev makes
    // /dev/input/eventK a moment later; the bench waits for that).
    char sysname[64];
    if (ioctl(fd, UI_GET_SYSNAME(sizeof sysname), sysname) < 0) fail("UI_GET_SYSNAME");
    for (int attempt = 0; attempt < 500; attempt++) {
        for (int k = 0; k < 1024; k++) {
            char path[160];
            snprintf(path, sizeof path, "/sys/devices/virtual/input/%s/event%d", sysname, k);
            if (access(path, F_OK) == 0) {
                snprintf(node, size, "/dev/input/event%d", k);
                return fd;
            }
        }
        usleep(10000);
    }
    fprintf(stderr, "pads-writer: pad %d (%s) has no event node after 5 s\n", number, sysname);
    exit(1);
}

static int put(struct input_event *events, int index, int type, int code, int value) {
    events[index] = (struct input_event){.type = type, .code = code, .value = value};
    return index + 1;
}

static void write_all(int fd, struct input_event *events, int count, long *failures) {
    if (write(fd, events, count * sizeof *events) != (ssize_t)(count * sizeof *events)) (*failures)++;
}

static int compare(const void *a, const void *b) {
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

static long now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000L + t.tv_nsec;
}

int main(int argc, char **argv) {
    if (argc != 4 || atoi(argv[1]) < 1 || atol(argv[2]) < 1 || atoi(argv[3]) < 1) {
        fprintf(stderr, "usage: pads-writer PADS FRAMES RATE_HZ\n");
        return 64;
    }
    int pads = atoi(argv[1]), rate = atoi(argv[3]);
    long frames = atol(argv[2]), period = 1000000000L / rate;
    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGUSR1);
    sigaddset(&signals, SIGTERM);
    sigprocmask(SIG_BLOCK, &signals, NULL);

    int *fds = calloc(pads, sizeof *fds);
    long *lateness = calloc(frames, sizeof *lateness);
    if (!fds || !lateness) fail("calloc");
    struct input_event events[8];
    long failures = 0;
    for (int i = 0; i < pads; i++) {
        char node[64];
        fds[i] = create_pad(i + 1, node, sizeof node);
        int n = 0;
        n = put(events, n, EV_KEY, BTN_TOOL_FINGER, 1);
        n = put(events, n, EV_KEY, BTN_TOUCH, 1);
        n = put(events, n, EV_ABS, ABS_X, 500);
        n = put(events, n, EV_ABS, ABS_Y, 500);
        n = put(events, n, EV_ABS, ABS_PRESSURE, 5);
        n = put(events, n, EV_SYN, SYN_REPORT, 0);
        write_all(fds[i], events, n, &failures);
        printf("node %s\n", node);
    }
    printf("ready\n");
    fflush(stdout);
    int signal;
    if (sigwait(&signals, &signal) != 0 || signal != SIGUSR1) return 0;

    struct sched_param priority = {.sched_priority = 50};
    int fifo = sched_setscheduler(0, SCHED_FIFO, &priority) == 0;
    long start = now_ns() + period;
    for (long frame = 0; frame < frames; frame++) {
        long deadline = start + frame * period;
        struct timespec target = {.tv_sec = deadline / 1000000000L, .tv_nsec = deadline % 1000000000L};
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &target, NULL) == EINTR) {}
        lateness[frame] = now_ns() - deadline;
        put(events, 0, EV_ABS, ABS_PRESSURE, 10 + (int)((frame * 7) % 221));
        put(events, 1, EV_SYN, SYN_REPORT, 0);
        for (int i = 0; i < pads; i++) write_all(fds[i], events, 2, &failures);
    }
    double seconds = (now_ns() - start) / 1e9;
    for (int i = 0; i < pads; i++) {
        int n = 0;
        n = put(events, n, EV_ABS, ABS_PRESSURE, 0);
        n = put(events, n, EV_KEY, BTN_TOUCH, 0);
        n = put(events, n, EV_KEY, BTN_TOOL_FINGER, 0);
        n = put(events, n, EV_SYN, SYN_REPORT, 0);
        write_all(fds[i], events, n, &failures);
    }
    qsort(lateness, frames, sizeof *lateness, compare);
    long late = 0;
    for (long frame = 0; frame < frames; frame++) late += lateness[frame] > period;
    printf("writer_sched=%s\n", fifo ? "SCHED_FIFO 50" : "SCHED_OTHER");
    printf("writer_frames=%ld\n", frames);
    printf("writer_seconds=%.3f\n", seconds);
    printf("writer_rate_hz=%.1f\n", frames / seconds);
    printf("writer_late_p50_ms=%.3f\n", lateness[frames / 2] / 1e6);
    printf("writer_late_p99_ms=%.3f\n", lateness[frames * 99 / 100] / 1e6);
    printf("writer_late_max_ms=%.3f\n", lateness[frames - 1] / 1e6);
    printf("writer_late_frames=%ld\n", late);
    printf("writer_write_failures=%ld\n", failures);
    fflush(stdout);
    sigdelset(&signals, SIGUSR1);
    sigwait(&signals, &signal);
    return 0;
}
