#ifndef FORCESCALE_CDEFERREDLIBRARY_H
#define FORCESCALE_CDEFERREDLIBRARY_H

// A shared library opened when a program first needs it, not when the program starts.
//
// The release build is one multi-call program (forcescale, with forcescaled, forcescale-web
// and forcescale-mqtt as links to it). libmicrohttpd and libmosquitto (with libssl and
// libcrypto behind it) serve only the web server and the MQTT bridge: linked in the usual
// way they would be loaded into every process of that program, the daemon's and each
// command's, and be a dependency of the package that holds it. CMicroHTTPDShim and
// CMosquitto define the functions forcescale calls, under the libraries' own names, and each
// one calls the library's through a pointer that deferred_library_function gives it.

#include <pthread.h>
#include <stddef.h>

struct deferred_library {
    /// The name dlopen(3) is given: the library's soname, "libmicrohttpd.so.12".
    const char *soname;
    /// The Debian package that installs it, named in the error: "libmicrohttpd12".
    const char *package;
    /// The functions to resolve, `count` of them, in the order of `functions`.
    const char *const *names;
    size_t count;
    /// Filled in by deferred_library_load.
    void **functions;
    /// Zero-initialised; deferred_library_load's own state.
    pthread_once_t once;
    int loaded;
    char error[512];
};

/// Defines `variable`, a `static struct deferred_library` for the library `soname` (of the
/// Debian package `package`) with the functions `FUNCTIONS(X)` names, `X(name)` for each, and
/// `REAL(name)`, that function of the library with its own type, for a definition under the
/// same name to call.
#define DEFERRED_LIBRARY(variable, library_soname, library_package, FUNCTIONS)                                       \
    enum { FUNCTIONS(DEFERRED_LIBRARY_INDEX) deferred_function_count };                                               \
    static const char *const deferred_names[] = {FUNCTIONS(DEFERRED_LIBRARY_NAME)};                                  \
    static void *deferred_functions[deferred_function_count];                                                         \
    static struct deferred_library variable = {                                                                       \
        .soname = library_soname,                                                                                     \
        .package = library_package,                                                                                   \
        .names = deferred_names,                                                                                      \
        .count = deferred_function_count,                                                                             \
        .functions = deferred_functions,                                                                              \
        .once = PTHREAD_ONCE_INIT,                                                                                    \
    }
#define DEFERRED_LIBRARY_INDEX(name) deferred_index_##name,
#define DEFERRED_LIBRARY_NAME(name) #name,
#define DEFERRED_FUNCTION(variable, name) ((__typeof__(&name))deferred_library_function(&variable, deferred_index_##name))

/// Opens `library` and resolves each of its names, once per process (later calls return the
/// first call's result). 1 when every function was found; 0 otherwise, with `library->error`
/// naming the library, what failed, and the package to install.
int deferred_library_load(struct deferred_library *library);

/// The function at `index` of `library->names`, loading the library first if need be. When
/// it cannot be loaded, writes `library->error` to standard error and ends the process with
/// status 127, as the dynamic loader does for a program whose library is missing.
void *deferred_library_function(struct deferred_library *library, size_t index);

#endif
