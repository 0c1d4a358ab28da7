// floor-rumble NODE: the floor of bench/rumble. A bare reader of an evdev node with force
// feedback: it uploads one effect (a FF_HAPTIC CLICK at 100 % on a pad with FF_HAPTIC, as
// forcescale's PEAK does, else FF_RUMBLE), asks for CLOCK_MONOTONIC event times, reads
// with a blocking read(2), and when a frame (up to its SYN_REPORT) brings ABS_PRESSURE to the
// axis maximum while armed, writes the play event at once; it re-arms when the pressure
// falls below 95 % of the maximum, as forcescale's default hysteresis does. Nothing else:
// no libevdev, no output per frame. For each play it keeps the latency as forcescale reports
// it, from the frame's event time to the return of the play's write(2), and on SIGTERM
// prints them, one per line in microseconds, to standard output.
#include <errno.h>
#include <fcntl.h>
#include <linux/input.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

// Kernel 6.18's FF_HAPTIC, which Debian 12's headers predate: the type, and the fields of
// struct ff_haptic_effect at the start of ff_effect's union (hid_usage at byte 0, intensity
// in percent at byte 6).
#define FLOOR_FF_HAPTIC 0x4f
#define FLOOR_HAPTIC_CLICK 0x1003

static volatile sig_atomic_t stopping;

static void on_term(int signal_number) {
    (void)signal_number;
    stopping = 1;
}

static long long now_us(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (long long)now.tv_sec * 1000000 + now.tv_nsec / 1000;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: floor-rumble NODE\n");
        return 64;
    }
    int fd = open(argv[1], O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        fprintf(stderr, "floor-rumble: %s: %s\n", argv[1], strerror(errno));
        return 66;
    }
    int clock = CLOCK_MONOTONIC;
    struct input_absinfo pressure;
    if (ioctl(fd, EVIOCSCLOCKID, &clock) < 0 || ioctl(fd, EVIOCGABS(ABS_PRESSURE), &pressure) < 0) {
        fprintf(stderr, "floor-rumble: %s: %s\n", argv[1], strerror(errno));
        return 69;
    }
    unsigned char ff_bits[FF_CNT / 8] = {0};
    if (ioctl(fd, EVIOCGBIT(EV_FF, sizeof ff_bits), ff_bits) < 0) {
        fprintf(stderr, "floor-rumble: %s: %s\n", argv[1], strerror(errno));
        return 69;
    }
    int haptic = (ff_bits[FLOOR_FF_HAPTIC / 8] >> (FLOOR_FF_HAPTIC % 8)) & 1;
    struct ff_effect effect = {.type = FF_RUMBLE, .id = -1, .replay = {.length = 45}};
    if (haptic) {
        unsigned short usage = FLOOR_HAPTIC_CLICK, intensity = 100;
        effect.type = FLOOR_FF_HAPTIC;
        memcpy((unsigned char *)&effect.u + 0, &usage, sizeof usage);
        memcpy((unsigned char *)&effect.u + 6, &intensity, sizeof intensity);
    } else {
        effect.u.rumble.strong_magnitude = 0xffff;
        effect.u.rumble.weak_magnitude = 0x4ccd;
    }
    if (ioctl(fd, EVIOCSFF, &effect) < 0) {
        fprintf(stderr, "floor-rumble: uploading the effect: %s\n", strerror(errno));
        return 69;
    }
    struct sigaction action = {.sa_handler = on_term};
    sigaction(SIGTERM, &action, NULL);  // no SA_RESTART: a blocked read returns EINTR
    fprintf(stderr, "floor-rumble: effect %d (%s) uploaded, reading %s\n", effect.id, haptic ? "haptic click" : "rumble", argv[1]);

    static long long latencies[1 << 20];
    size_t count = 0;
    int value = 0, armed = 1, crossed = 0;
    int rearm = pressure.maximum - (pressure.maximum - pressure.minimum) / 20;
    struct input_event events[64];
    struct input_event play = {.type = EV_FF, .code = (unsigned short)effect.id, .value = 1};
    while (!stopping) {
        ssize_t got = read(fd, events, sizeof events);
        if (got < 0) {
            if (errno == EINTR) continue;
            fprintf(stderr, "floor-rumble: read: %s\n", strerror(errno));
            return 74;
        }
        for (size_t i = 0; i < (size_t)got / sizeof events[0]; i++) {
            const struct input_event *event = &events[i];
            if (event->type == EV_ABS && event->code == ABS_PRESSURE) {
                value = event->value;
                if (armed && value >= pressure.maximum) crossed = 1;
                if (value < rearm) armed = 1;
            } else if (event->type == EV_SYN && event->code == SYN_REPORT && crossed) {
                crossed = 0;
                armed = 0;
                if (write(fd, &play, sizeof play) != sizeof play) {
                    fprintf(stderr, "floor-rumble: play: %s\n", strerror(errno));
                    return 74;
                }
                long long frame = (long long)event->input_event_sec * 1000000 + event->input_event_usec;
                if (count < sizeof latencies / sizeof latencies[0]) latencies[count++] = now_us() - frame;
            }
        }
    }
    for (size_t i = 0; i < count; i++) printf("%lld\n", latencies[i]);
    return 0;
}
