#ifndef FORCESCALE_CSQLITE_SHIM_H
#define FORCESCALE_CSQLITE_SHIM_H

// SQLite 3 (Debian's libsqlite3-dev), for the force log. <sqlite3.h> includes only
// <stdarg.h>, so it does not bring in the socket enums that trouble CLinux.
#include <sqlite3.h>

// SQLITE_TRANSIENT is a macro casting -1 to a function pointer, which Swift cannot import.
// Binding with it makes SQLite copy the bytes at once, so Swift's temporary buffers may go
// away as soon as the bind returns.

/// sqlite3_bind_text with SQLITE_TRANSIENT: `length` bytes of UTF-8, copied by SQLite.
static inline int CSQLite_bind_text_transient(sqlite3_stmt *statement, int index, const char *text, int length) {
    return sqlite3_bind_text(statement, index, text, length, SQLITE_TRANSIENT);
}

#endif
