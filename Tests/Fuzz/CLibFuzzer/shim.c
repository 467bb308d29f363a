// Intentionally empty: CLibFuzzer only declares LLVMFuzzerRunDriver, which libclang_rt.fuzzer
// defines (linked by -sanitize=fuzzer).
#include "CLibFuzzer.h"
