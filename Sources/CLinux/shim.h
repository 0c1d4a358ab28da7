#ifndef FORCESCALE_CLINUX_SHIM_H
#define FORCESCALE_CLINUX_SHIM_H

// Linux interfaces that Swift's Glibc module does not bring in.
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <sys/signalfd.h>
#include <sys/inotify.h>
#include <signal.h>

// accept4 and struct ucred are GNU extensions that Swift's Glibc module hides. They are
// provided here without including <sys/socket.h>: that header's enums (SOCK_*, MSG_*)
// would then exist in this module and in Glibc's, and Swift files that import only Glibc
// intermittently fail to find them, depending on how the compiler batches files.

/// The kernel's struct ucred, as SO_PEERCRED fills it in.
struct forcescale_ucred {
    pid_t pid;
    uid_t uid;
    gid_t gid;
};

/// accept4(2) without an address, so that a client descriptor can be born with
/// SOCK_NONBLOCK | SOCK_CLOEXEC (which the caller passes as `flags`) and never exists
/// without them, not even between accept and fcntl, where another thread could fork.
static inline int forcescale_accept4(int listener, int flags) {
    extern int accept4(int, void *, unsigned int *, int);
    return accept4(listener, 0, 0, flags);
}

/// accept4(2) with the peer's address, written into `address` (`*length` bytes at most;
/// its length as the kernel gives it comes back in `*length`).
static inline int forcescale_accept4_from(int listener, void *address, unsigned int *length, int flags) {
    extern int accept4(int, void *, unsigned int *, int);
    return accept4(listener, address, length, flags);
}

/// getrandom(2) (<sys/random.h>, which Swift's Glibc module does not bring in): random
/// bytes from the kernel's generator.
static inline long forcescale_getrandom(void *buffer, unsigned long length, unsigned int flags) {
    extern long getrandom(void *, unsigned long, unsigned int);
    return getrandom(buffer, length, flags);
}

#endif
