#define _GNU_SOURCE
#include "CDeferredLibrary.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

// pthread_once's routine takes no argument: the library being loaded is handed over in a
// thread-local, set just before the call.
static _Thread_local struct deferred_library *loading;

static void load_once(void) {
    struct deferred_library *library = loading;
    void *handle = dlopen(library->soname, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        snprintf(library->error, sizeof library->error, "cannot load %s (%s); install Debian's %s", library->soname,
                 dlerror(), library->package);
        return;
    }
    for (size_t index = 0; index < library->count; index++) {
        void *function = dlsym(handle, library->names[index]);
        if (!function) {
            snprintf(library->error, sizeof library->error, "%s has no %s; install Debian's %s as this build expects it",
                     library->soname, library->names[index], library->package);
            return;
        }
        library->functions[index] = function;
    }
    __atomic_store_n(&library->loaded, 1, __ATOMIC_RELEASE);
}

int deferred_library_load(struct deferred_library *library) {
    loading = library;
    pthread_once(&library->once, load_once);
    loading = NULL;
    return __atomic_load_n(&library->loaded, __ATOMIC_ACQUIRE);
}

void *deferred_library_function(struct deferred_library *library, size_t index) {
    if (__builtin_expect(!__atomic_load_n(&library->loaded, __ATOMIC_ACQUIRE), 0) && !deferred_library_load(library)) {
        const char *program = program_invocation_short_name;
        char line[640];
        int length = snprintf(line, sizeof line, "Error: %s: %s\n", program, library->error);
        if (length > 0) (void)!write(STDERR_FILENO, line, (size_t)length < sizeof line ? (size_t)length : sizeof line - 1);
        _exit(127);
    }
    return library->functions[index];
}
