#ifndef FORCESCALE_CLINUX_SHIM_H
#define FORCESCALE_CLINUX_SHIM_H

// Linux interfaces that Swift's Glibc module does not bring in.
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <sys/signalfd.h>
#include <sys/inotify.h>
#include <signal.h>

#endif
