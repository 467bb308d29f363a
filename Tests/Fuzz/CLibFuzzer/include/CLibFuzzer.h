// libFuzzer's driver entry point (compiler-rt FuzzerInterface.h). The fuzz targets call it
// from their own `main` because SwiftPM links every ELF executable with
// `--defsym main=<Module>_main`, so libFuzzer's `main` cannot be the entry point.
#ifndef CLIBFUZZER_H
#define CLIBFUZZER_H
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

#endif
