#ifndef CFUZZDRIVER_H
#define CFUZZDRIVER_H
#include <stddef.h>
#include <stdint.h>

// libFuzzer's driver for programs that have a main of their own (LLVM's libFuzzer
// documentation, "Using libFuzzer as a library"). Declared weak: a build without libFuzzer
// (`swift build`) links, and finds it NULL; `make fuzz` links libFuzzer and it is there.
extern int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size))
    __attribute__((weak));

static inline int CFuzzDriver_hasLibFuzzer(void) { return LLVMFuzzerRunDriver != NULL; }

#endif
