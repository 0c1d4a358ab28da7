#ifndef FORCESCALE_CMICROHTTPDSHIM_H
#define FORCESCALE_CMICROHTTPDSHIM_H

// What Swift cannot call in libmicrohttpd, and the rest of what forcescale-web uses, with
// plain C types only (see Sources/CMicroHTTPD/shim.h for why <microhttpd.h> stays out of
// Swift's sight). MHD_start_daemon, MHD_get_daemon_info and MHD_get_connection_info are
// variadic; the external logger takes a va_list; the callbacks return enum MHD_Result.
// Each function here says which libmicrohttpd call it makes.

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct MHD_Daemon;
struct MHD_Connection;
struct MHD_Response;

/// The request handler (MHD_AccessHandlerCallback): returns 1 to go on (MHD_YES), 0 to
/// close the connection (MHD_NO).
typedef int (*CMicroHTTPD_AccessHandler)(void *context, struct MHD_Connection *connection, const char *url,
                                         const char *method, const char *version, const char *upload_data,
                                         size_t *upload_data_size, void **request_context);
/// Called when a request ends (MHD_OPTION_NOTIFY_COMPLETED); `how` is its
/// MHD_RequestTerminationCode (0: the response was sent completely).
typedef void (*CMicroHTTPD_Completed)(void *context, struct MHD_Connection *connection, void **request_context, int how);
/// One message of the library's error log, formatted.
typedef void (*CMicroHTTPD_Log)(void *context, const char *message);
/// A streamed response's producer (MHD_ContentReaderCallback): the number of bytes written
/// into `buffer` (at most `max`), 0 when there is nothing yet (only after suspending the
/// connection), or CMicroHTTPD_END_OF_STREAM / CMicroHTTPD_END_WITH_ERROR.
typedef ssize_t (*CMicroHTTPD_Reader)(void *context, uint64_t position, char *buffer, size_t max);
/// Releases a streamed response's context (MHD_ContentReaderFreeCallback).
typedef void (*CMicroHTTPD_Free)(void *context);
/// A connection started (`started` 1) or closed (0) (MHD_OPTION_NOTIFY_CONNECTION).
typedef void (*CMicroHTTPD_ConnectionNotice)(void *context, struct MHD_Connection *connection, int started);

/// MHD_CONTENT_READER_END_OF_STREAM: the stream ends normally.
#define CMicroHTTPD_END_OF_STREAM ((ssize_t)-1)
/// MHD_CONTENT_READER_END_WITH_ERROR: the stream ends and the connection is closed.
#define CMicroHTTPD_END_WITH_ERROR ((ssize_t)-2)

/// What the server is started with.
struct CMicroHTTPD_Settings {
    /// At most this many connections at once (MHD_OPTION_CONNECTION_LIMIT); the caller
    /// admits them (CMicroHTTPD_add_connection) and keeps its own, lower, limit.
    unsigned connection_limit;
    /// Seconds without any progress before a connection is closed; suspended ones excepted
    /// (MHD_OPTION_CONNECTION_TIMEOUT).
    unsigned connection_timeout;
    /// Bytes of memory per connection: the request's line and headers must fit in it, or
    /// the answer is 431 (MHD_OPTION_CONNECTION_MEMORY_LIMIT).
    size_t connection_memory_limit;
    CMicroHTTPD_AccessHandler handler;
    void *handler_context;
    CMicroHTTPD_Completed completed;
    void *completed_context;
    CMicroHTTPD_Log log;
    void *log_context;
    CMicroHTTPD_ConnectionNotice notice;
    void *notice_context;
};

/// MHD_start_daemon with MHD_USE_EPOLL (no thread: the caller runs it from its own epoll
/// loop through CMicroHTTPD_epoll_fd, CMicroHTTPD_run and CMicroHTTPD_timeout),
/// MHD_ALLOW_SUSPEND_RESUME, and MHD_USE_NO_LISTEN_SOCKET: the caller accepts and hands
/// each connection over with CMicroHTTPD_add_connection once its request head is in.
/// NULL on failure, after logging why through `settings->log`.
struct MHD_Daemon *CMicroHTTPD_start(const struct CMicroHTTPD_Settings *settings);
/// MHD_get_daemon_info(MHD_DAEMON_INFO_EPOLL_FD): the descriptor to watch for readability;
/// -1 when there is none.
int CMicroHTTPD_epoll_fd(struct MHD_Daemon *daemon);
/// MHD_run: does what can be done without waiting. 1 on success.
int CMicroHTTPD_run(struct MHD_Daemon *daemon);
/// MHD_get_timeout: milliseconds until the library must run again even if nothing is
/// readable (a connection's timeout), 0 for at once, -1 for no such deadline.
int64_t CMicroHTTPD_timeout(struct MHD_Daemon *daemon);
/// MHD_add_connection: the library takes the connected socket `socket` (and closes it,
/// also when it fails). 1 on success.
int CMicroHTTPD_add_connection(struct MHD_Daemon *daemon, int socket, const void *address, unsigned address_length);
/// MHD_stop_daemon: closes every connection and frees the server. Resume every suspended
/// connection (and run once) before, or the library aborts.
void CMicroHTTPD_stop(struct MHD_Daemon *daemon);

/// MHD_suspend_connection.
void CMicroHTTPD_suspend(struct MHD_Connection *connection);
/// MHD_resume_connection: takes effect at the next CMicroHTTPD_run, which the library's
/// inter-thread channel makes the epoll descriptor readable for.
void CMicroHTTPD_resume(struct MHD_Connection *connection);
/// MHD_get_connection_info(MHD_CONNECTION_INFO_CONNECTION_FD): the connection's socket,
/// -1 when unknown.
int CMicroHTTPD_connection_fd(struct MHD_Connection *connection);
/// MHD_lookup_connection_value(MHD_HEADER_KIND): a request header, NULL when absent.
const char *CMicroHTTPD_header(struct MHD_Connection *connection, const char *name);
/// MHD_lookup_connection_value(MHD_GET_ARGUMENT_KIND): an argument of the URL's query,
/// percent-decoded; NULL when absent.
const char *CMicroHTTPD_query_argument(struct MHD_Connection *connection, const char *name);
/// MHD_get_connection_info(MHD_CONNECTION_INFO_CLIENT_ADDRESS), written as text
/// ("127.0.0.1:40312", "[::1]:40312") into `buffer`; 0 on success.
int CMicroHTTPD_client_address(struct MHD_Connection *connection, char *buffer, size_t size);

/// MHD_create_response_from_buffer with MHD_RESPMEM_MUST_COPY.
struct MHD_Response *CMicroHTTPD_response_copying(const void *body, size_t length);
/// MHD_create_response_from_callback with MHD_SIZE_UNKNOWN (sent chunked).
struct MHD_Response *CMicroHTTPD_response_streaming(size_t block_size, CMicroHTTPD_Reader reader, void *context,
                                                   CMicroHTTPD_Free release);
/// MHD_add_response_header; 1 on success.
int CMicroHTTPD_add_header(struct MHD_Response *response, const char *name, const char *value);
/// MHD_queue_response; 1 on success.
int CMicroHTTPD_queue(struct MHD_Connection *connection, unsigned status, struct MHD_Response *response);
/// MHD_destroy_response (the library keeps its own reference while the response is queued).
void CMicroHTTPD_destroy(struct MHD_Response *response);

#endif
