#ifndef FORCESCALE_CSYSTEMD_SHIM_H
#define FORCESCALE_CSYSTEMD_SHIM_H

// The three calls of libsystemd's sd-daemon that the daemon uses: readiness and watchdog
// notifications (sd_notify, sd_watchdog_enabled) and socket activation (sd_listen_fds).
//
// They are declared here, exactly as <systemd/sd-daemon.h> declares them, instead of
// including that header: it includes <sys/socket.h>, whose enums (SOCK_*, MSG_*) would then
// exist in this module and in Glibc's, and Swift files that import only Glibc intermittently
// fail to find them (see Sources/CLinux/shim.h). The declarations were checked against the
// header by compiling both into one C file; a mismatch there is a "conflicting types" error.
// sd_notifyf and friends are variadic, which Swift cannot call: format in Swift instead.

#include <stdint.h>

/// Sends `state` (newline-separated VAR=value assignments) to the service manager's
/// NOTIFY_SOCKET. Returns > 0 when sent, 0 when NOTIFY_SOCKET is not set, or a negative
/// errno. A non-zero `unset_environment` removes NOTIFY_SOCKET afterwards.
int sd_notify(int unset_environment, const char *state);

/// Whether the service manager expects WATCHDOG=1 keep-alives: > 0 with the interval in
/// microseconds in `*usec` when WATCHDOG_USEC is set (and WATCHDOG_PID, if set, is this
/// process), 0 when not, or a negative errno when the variables are malformed.
int sd_watchdog_enabled(int unset_environment, uint64_t *usec);

/// How many sockets the service manager passed (LISTEN_FDS, when LISTEN_PID is this
/// process), numbered from CSystemd_LISTEN_FDS_START; each is made close-on-exec. 0 when
/// none, or a negative errno. A non-zero `unset_environment` removes LISTEN_PID,
/// LISTEN_FDS and LISTEN_FDNAMES afterwards.
int sd_listen_fds(int unset_environment);

/// SD_LISTEN_FDS_START: the first passed descriptor.
static const int CSystemd_LISTEN_FDS_START = 3;

#endif
