#ifndef FORCESCALE_CMICROHTTPD_SHIM_H
#define FORCESCALE_CMICROHTTPD_SHIM_H

// GNU libmicrohttpd (Debian's libmicrohttpd-dev): this module only
// names the library's handle types. <microhttpd.h> is not included here: it
// includes <sys/socket.h>, whose enums (SOCK_*, MSG_*) would then exist in this module and in
// Glibc's, and Swift files that import only Glibc intermittently fail to find them (see
// Sources/CLinux/shim.h). Swift calls the library through CMicroHTTPDShim, whose functions
// take plain C types; its C file includes the real header, so the compiler checks every
// call against it.

/// A running server (`MHD_start_daemon`'s result).
struct MHD_Daemon;
/// One client connection, as handed to the request handler.
struct MHD_Connection;
/// A response, built once and queued on a connection.
struct MHD_Response;

#endif
