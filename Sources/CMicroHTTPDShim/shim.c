// The bodies of CMicroHTTPDShim.h: each is one libmicrohttpd call, with the library's own
// header in sight so that the compiler checks types and constants against it.

#include "CMicroHTTPDShim.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

_Static_assert(CMicroHTTPD_END_OF_STREAM == MHD_CONTENT_READER_END_OF_STREAM, "end of stream");
_Static_assert(CMicroHTTPD_END_WITH_ERROR == MHD_CONTENT_READER_END_WITH_ERROR, "end with error");

/// What the trampolines below need: the settings' callbacks, kept for the server's life.
struct trampolines {
    struct CMicroHTTPD_Settings settings;
};

static enum MHD_Result access_trampoline(void *cls, struct MHD_Connection *connection, const char *url,
                                         const char *method, const char *version, const char *upload_data,
                                         size_t *upload_data_size, void **request_context) {
    struct trampolines *t = cls;
    return t->settings.handler(t->settings.handler_context, connection, url, method, version, upload_data,
                               upload_data_size, request_context)
               ? MHD_YES
               : MHD_NO;
}

static void completed_trampoline(void *cls, struct MHD_Connection *connection, void **request_context,
                                 enum MHD_RequestTerminationCode how) {
    struct trampolines *t = cls;
    if (t->settings.completed) t->settings.completed(t->settings.completed_context, connection, request_context, (int)how);
}

static void log_trampoline(void *cls, const char *format, va_list arguments) {
    struct trampolines *t = cls;
    char message[512];
    vsnprintf(message, sizeof message, format, arguments);
    // The library ends its messages with a newline; the caller adds its own.
    size_t length = strlen(message);
    while (length > 0 && message[length - 1] == '\n') message[--length] = 0;
    if (t->settings.log) t->settings.log(t->settings.log_context, message);
}

static void notice_trampoline(void *cls, struct MHD_Connection *connection, void **socket_context,
                              enum MHD_ConnectionNotificationCode code) {
    (void)socket_context;
    struct trampolines *t = cls;
    if (t->settings.notice) t->settings.notice(t->settings.notice_context, connection, code == MHD_CONNECTION_NOTIFY_STARTED);
}

// The trampolines' memory goes with the server: MHD_stop_daemon cannot tell us, so the
// pairs are found again by daemon in this small list (one or two servers per process).
struct started {
    struct MHD_Daemon *daemon;
    struct trampolines *trampolines;
    struct started *next;
};
static struct started *started_servers;

struct MHD_Daemon *CMicroHTTPD_start(const struct CMicroHTTPD_Settings *settings) {
    struct trampolines *t = calloc(1, sizeof *t);
    struct started *entry = calloc(1, sizeof *entry);
    if (!t || !entry) {
        free(t);
        free(entry);
        return NULL;
    }
    t->settings = *settings;
    struct MHD_Daemon *daemon = MHD_start_daemon(
        MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG | MHD_USE_NO_LISTEN_SOCKET, 0, NULL, NULL,
        access_trampoline, t,
        MHD_OPTION_EXTERNAL_LOGGER, log_trampoline, t,
        MHD_OPTION_NOTIFY_CONNECTION, notice_trampoline, t,
        MHD_OPTION_CONNECTION_LIMIT, settings->connection_limit,
        MHD_OPTION_CONNECTION_TIMEOUT, settings->connection_timeout,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, settings->connection_memory_limit,
        MHD_OPTION_NOTIFY_COMPLETED, completed_trampoline, t,
        MHD_OPTION_END);
    if (!daemon) {
        free(t);
        free(entry);
        return NULL;
    }
    entry->daemon = daemon;
    entry->trampolines = t;
    entry->next = started_servers;
    started_servers = entry;
    return daemon;
}

int CMicroHTTPD_epoll_fd(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_EPOLL_FD);
    return info ? info->epoll_fd : -1;
}

int CMicroHTTPD_run(struct MHD_Daemon *daemon) { return MHD_run(daemon) == MHD_YES; }

int64_t CMicroHTTPD_timeout(struct MHD_Daemon *daemon) {
    MHD_UNSIGNED_LONG_LONG milliseconds = 0;
    if (MHD_get_timeout(daemon, &milliseconds) != MHD_YES) return -1;
    return milliseconds > INT64_MAX ? INT64_MAX : (int64_t)milliseconds;
}

int CMicroHTTPD_add_connection(struct MHD_Daemon *daemon, int socket, const void *address, unsigned address_length) {
    return MHD_add_connection(daemon, (MHD_socket)socket, (const struct sockaddr *)address, (socklen_t)address_length) == MHD_YES;
}

void CMicroHTTPD_stop(struct MHD_Daemon *daemon) {
    MHD_stop_daemon(daemon);
    for (struct started **link = &started_servers; *link; link = &(*link)->next) {
        if ((*link)->daemon == daemon) {
            struct started *entry = *link;
            *link = entry->next;
            free(entry->trampolines);
            free(entry);
            break;
        }
    }
}

void CMicroHTTPD_suspend(struct MHD_Connection *connection) { MHD_suspend_connection(connection); }

void CMicroHTTPD_resume(struct MHD_Connection *connection) { MHD_resume_connection(connection); }

int CMicroHTTPD_connection_fd(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info ? (int)info->connect_fd : -1;
}

const char *CMicroHTTPD_header(struct MHD_Connection *connection, const char *name) {
    return MHD_lookup_connection_value(connection, MHD_HEADER_KIND, name);
}

const char *CMicroHTTPD_query_argument(struct MHD_Connection *connection, const char *name) {
    return MHD_lookup_connection_value(connection, MHD_GET_ARGUMENT_KIND, name);
}

int CMicroHTTPD_client_address(struct MHD_Connection *connection, char *buffer, size_t size) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (!info || !info->client_addr || size == 0) return -1;
    const struct sockaddr *address = info->client_addr;
    char host[INET6_ADDRSTRLEN];
    if (address->sa_family == AF_INET) {
        const struct sockaddr_in *v4 = (const struct sockaddr_in *)address;
        if (!inet_ntop(AF_INET, &v4->sin_addr, host, sizeof host)) return -1;
        snprintf(buffer, size, "%s:%u", host, (unsigned)ntohs(v4->sin_port));
        return 0;
    }
    if (address->sa_family == AF_INET6) {
        const struct sockaddr_in6 *v6 = (const struct sockaddr_in6 *)address;
        if (!inet_ntop(AF_INET6, &v6->sin6_addr, host, sizeof host)) return -1;
        snprintf(buffer, size, "[%s]:%u", host, (unsigned)ntohs(v6->sin6_port));
        return 0;
    }
    return -1;
}

struct MHD_Response *CMicroHTTPD_response_copying(const void *body, size_t length) {
    return MHD_create_response_from_buffer(length, (void *)body, MHD_RESPMEM_MUST_COPY);
}

struct MHD_Response *CMicroHTTPD_response_streaming(size_t block_size, CMicroHTTPD_Reader reader, void *context,
                                                   CMicroHTTPD_Free release) {
    return MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, block_size, reader, context, release);
}

int CMicroHTTPD_add_header(struct MHD_Response *response, const char *name, const char *value) {
    return MHD_add_response_header(response, name, value) == MHD_YES;
}

int CMicroHTTPD_queue(struct MHD_Connection *connection, unsigned status, struct MHD_Response *response) {
    return MHD_queue_response(connection, status, response) == MHD_YES;
}

void CMicroHTTPD_destroy(struct MHD_Response *response) { MHD_destroy_response(response); }
