#ifndef FORCESCALE_CEVDEV_SHIM_H
#define FORCESCALE_CEVDEV_SHIM_H

// libevdev and the kernel's input and uinput interfaces. The ioctl request numbers are
// function-like macros, which Swift cannot call, so each gets a static inline shim here,
// prefixed with the module's name as swift-nio does (CNIOLinux_*). Each returns what the
// ioctl returns: -1 with errno set on failure.

#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/ioctl.h>
#include <linux/input.h>
#include <linux/uinput.h>
#include <linux/hidraw.h>
#include <libevdev/libevdev.h>

// Kernel 6.18 names property 0x07 INPUT_PROP_PRESSUREPAD (earlier INPUT_PROP_HAPTIC_TOUCHPAD);
// Debian 12's headers have neither.
#ifndef INPUT_PROP_PRESSUREPAD
#define INPUT_PROP_PRESSUREPAD 0x07
#endif

// MARK: evdev force feedback

// Kernel 6.18 added FF_HAPTIC, effects named by a usage of the HID haptics page (a pressure
// pad's click), and struct ff_haptic_effect as the last member of ff_effect's union:
// { __u16 hid_usage; __u16 vendor_id; __u8 vendor_waveform_page; __u16 intensity;
//   __u16 repeat_count; __u16 retrigger_period; } (12 bytes, intensity at offset 6: the
// __u8 is padded). Debian 12's headers know none of it, so the member is read and written
// here by its offsets within the union.
#define CEVDEV_FF_HAPTIC 0x4f
_Static_assert(offsetof(struct ff_effect, u) == 16, "ff_effect's union starts at offset 16");
_Static_assert(sizeof(((struct ff_effect *)0)->u) >= 12, "ff_effect's union holds ff_haptic_effect");

/// Makes `effect` an FF_HAPTIC effect of `usage` (the haptics page's low 16 bits) at
/// `intensity` percent, played once.
static inline void CEvdev_set_haptic(struct ff_effect *effect, unsigned short usage, unsigned short intensity) {
    unsigned char *haptic = (unsigned char *)&effect->u;
    unsigned short none = 0;
    effect->type = CEVDEV_FF_HAPTIC;
    memset(haptic, 0, 12);
    memcpy(haptic + 0, &usage, sizeof usage);
    memcpy(haptic + 2, &none, sizeof none);
    memcpy(haptic + 6, &intensity, sizeof intensity);
}

/// The HID usage of an FF_HAPTIC effect.
static inline unsigned short CEvdev_haptic_usage(const struct ff_effect *effect) {
    unsigned short usage;
    memcpy(&usage, (const unsigned char *)&effect->u + 0, sizeof usage);
    return usage;
}

/// The intensity (percent) of an FF_HAPTIC effect.
static inline unsigned short CEvdev_haptic_intensity(const struct ff_effect *effect) {
    unsigned short intensity;
    memcpy(&intensity, (const unsigned char *)&effect->u + 6, sizeof intensity);
    return intensity;
}

/// Uploads (id -1) or updates an effect; the kernel writes the new id into effect->id.
static inline int CEvdev_upload_effect(int fd, struct ff_effect *effect) {
    return ioctl(fd, EVIOCSFF, effect);
}

/// Erases an uploaded effect.
static inline int CEvdev_erase_effect(int fd, int effect_id) {
    return ioctl(fd, EVIOCRMFF, effect_id);
}

/// How many effects the device can hold at once.
static inline int CEvdev_effects_capacity(int fd, int *count) {
    return ioctl(fd, EVIOCGEFFECTS, count);
}

/// The evdev protocol version; fails with ENODEV once the device is unplugged (its
/// descriptor stays open, but every ioctl on it fails).
static inline int CEvdev_driver_version(int fd, int *version) {
    return ioctl(fd, EVIOCGVERSION, version);
}

/// Selects the clock of event timestamps (CLOCK_MONOTONIC keeps them comparable with timerfd).
static inline int CEvdev_set_clock(int fd, int clock_id) {
    return ioctl(fd, EVIOCSCLOCKID, &clock_id);
}

// MARK: uinput (virtual devices for tests)

/// A HID feature report through a hidraw node (HIDIOCGFEATURE): `report[0]` is the report
/// ID asked for; returns the report's length, ID included. The kernel scenarios read a
/// Precision Touchpad's Button Type with it.
static inline int CEvdev_hidraw_get_feature(int fd, unsigned char *report, int length) {
    return ioctl(fd, HIDIOCGFEATURE(length), report);
}

static inline int CEvdev_uinput_set_event_bit(int fd, int type) { return ioctl(fd, UI_SET_EVBIT, type); }
static inline int CEvdev_uinput_set_key_bit(int fd, int code) { return ioctl(fd, UI_SET_KEYBIT, code); }
static inline int CEvdev_uinput_set_abs_bit(int fd, int code) { return ioctl(fd, UI_SET_ABSBIT, code); }
static inline int CEvdev_uinput_set_ff_bit(int fd, int code) { return ioctl(fd, UI_SET_FFBIT, code); }
static inline int CEvdev_uinput_set_rel_bit(int fd, int code) { return ioctl(fd, UI_SET_RELBIT, code); }
static inline int CEvdev_uinput_set_property_bit(int fd, int property) { return ioctl(fd, UI_SET_PROPBIT, property); }
static inline int CEvdev_uinput_setup(int fd, const struct uinput_setup *setup) { return ioctl(fd, UI_DEV_SETUP, setup); }
static inline int CEvdev_uinput_abs_setup(int fd, const struct uinput_abs_setup *setup) { return ioctl(fd, UI_ABS_SETUP, setup); }
static inline int CEvdev_uinput_create(int fd) { return ioctl(fd, UI_DEV_CREATE); }
static inline int CEvdev_uinput_destroy(int fd) { return ioctl(fd, UI_DEV_DESTROY); }
static inline int CEvdev_uinput_begin_upload(int fd, struct uinput_ff_upload *upload) { return ioctl(fd, UI_BEGIN_FF_UPLOAD, upload); }
static inline int CEvdev_uinput_end_upload(int fd, struct uinput_ff_upload *upload) { return ioctl(fd, UI_END_FF_UPLOAD, upload); }
static inline int CEvdev_uinput_begin_erase(int fd, struct uinput_ff_erase *erase) { return ioctl(fd, UI_BEGIN_FF_ERASE, erase); }
static inline int CEvdev_uinput_end_erase(int fd, struct uinput_ff_erase *erase) { return ioctl(fd, UI_END_FF_ERASE, erase); }

/// The sysfs name of the created device (e.g. "input12"), to find its event node.
static inline int CEvdev_uinput_sysname(int fd, char *buffer, unsigned int length) {
    return ioctl(fd, UI_GET_SYSNAME(length), buffer);
}

#endif
