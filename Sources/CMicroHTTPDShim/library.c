// libmicrohttpd's functions that shim.c calls, under their own names, each calling the
// library's through CDeferredLibrary: the library is loaded when forcescale-web first starts
// a server, never into the other programs of the multi-call build (see CDeferredLibrary.h).
// The compiler checks each definition against <microhttpd.h>.

#include <microhttpd.h>
#include <stdarg.h>

#include "CDeferredLibrary.h"

#define MICROHTTPD_FUNCTIONS(X)                                                                                        \
    X(MHD_start_daemon_va)                                                                                             \
    X(MHD_stop_daemon)                                                                                                 \
    X(MHD_run)                                                                                                         \
    X(MHD_get_timeout)                                                                                                 \
    X(MHD_add_connection)                                                                                              \
    X(MHD_get_daemon_info)                                                                                             \
    X(MHD_get_connection_info)                                                                                         \
    X(MHD_lookup_connection_value)                                                                                     \
    X(MHD_suspend_connection)                                                                                          \
    X(MHD_resume_connection)                                                                                           \
    X(MHD_create_response_from_buffer)                                                                                 \
    X(MHD_create_response_from_callback)                                                                               \
    X(MHD_add_response_header)                                                                                         \
    X(MHD_queue_response)                                                                                              \
    X(MHD_destroy_response)

DEFERRED_LIBRARY(microhttpd, "libmicrohttpd.so.12", "libmicrohttpd12", MICROHTTPD_FUNCTIONS);

// The library's function `name`, with its own type.
#define REAL(name) DEFERRED_FUNCTION(microhttpd, name)

struct MHD_Daemon *MHD_start_daemon_va(unsigned int flags, uint16_t port, MHD_AcceptPolicyCallback apc, void *apc_cls,
                                       MHD_AccessHandlerCallback dh, void *dh_cls, va_list ap) {
    return REAL(MHD_start_daemon_va)(flags, port, apc, apc_cls, dh, dh_cls, ap);
}

struct MHD_Daemon *MHD_start_daemon(unsigned int flags, uint16_t port, MHD_AcceptPolicyCallback apc, void *apc_cls,
                                    MHD_AccessHandlerCallback dh, void *dh_cls, ...) {
    va_list ap;
    va_start(ap, dh_cls);
    struct MHD_Daemon *daemon = MHD_start_daemon_va(flags, port, apc, apc_cls, dh, dh_cls, ap);
    va_end(ap);
    return daemon;
}

void MHD_stop_daemon(struct MHD_Daemon *daemon) { REAL(MHD_stop_daemon)(daemon); }

enum MHD_Result MHD_run(struct MHD_Daemon *daemon) { return REAL(MHD_run)(daemon); }

enum MHD_Result MHD_get_timeout(struct MHD_Daemon *daemon, MHD_UNSIGNED_LONG_LONG *timeout) {
    return REAL(MHD_get_timeout)(daemon, timeout);
}

enum MHD_Result MHD_add_connection(struct MHD_Daemon *daemon, MHD_socket client_socket, const struct sockaddr *addr,
                                   socklen_t addrlen) {
    return REAL(MHD_add_connection)(daemon, client_socket, addr, addrlen);
}

// The two info functions are variadic, with no va_list form; the kinds shim.c asks for
// (the epoll descriptor, a connection's descriptor and client address) take no further
// argument, so none is passed on.
const union MHD_DaemonInfo *MHD_get_daemon_info(struct MHD_Daemon *daemon, enum MHD_DaemonInfoType info_type, ...) {
    return REAL(MHD_get_daemon_info)(daemon, info_type);
}

const union MHD_ConnectionInfo *MHD_get_connection_info(struct MHD_Connection *connection,
                                                        enum MHD_ConnectionInfoType info_type, ...) {
    return REAL(MHD_get_connection_info)(connection, info_type);
}

const char *MHD_lookup_connection_value(struct MHD_Connection *connection, enum MHD_ValueKind kind, const char *key) {
    return REAL(MHD_lookup_connection_value)(connection, kind, key);
}

void MHD_suspend_connection(struct MHD_Connection *connection) { REAL(MHD_suspend_connection)(connection); }

void MHD_resume_connection(struct MHD_Connection *connection) { REAL(MHD_resume_connection)(connection); }

struct MHD_Response *MHD_create_response_from_buffer(size_t size, void *buffer, enum MHD_ResponseMemoryMode mode) {
    return REAL(MHD_create_response_from_buffer)(size, buffer, mode);
}

struct MHD_Response *MHD_create_response_from_callback(uint64_t size, size_t block_size, MHD_ContentReaderCallback crc,
                                                       void *crc_cls, MHD_ContentReaderFreeCallback crfc) {
    return REAL(MHD_create_response_from_callback)(size, block_size, crc, crc_cls, crfc);
}

enum MHD_Result MHD_add_response_header(struct MHD_Response *response, const char *header, const char *content) {
    return REAL(MHD_add_response_header)(response, header, content);
}

enum MHD_Result MHD_queue_response(struct MHD_Connection *connection, unsigned int status_code,
                                   struct MHD_Response *response) {
    return REAL(MHD_queue_response)(connection, status_code, response);
}

void MHD_destroy_response(struct MHD_Response *response) { REAL(MHD_destroy_response)(response); }
