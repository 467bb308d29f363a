#include "CFrameRateBuildInfo.h"

#ifndef FRAMERATED_GIT_COMMIT
#define FRAMERATED_GIT_COMMIT ""
#endif

const char *framerated_build_commit(void) { return FRAMERATED_GIT_COMMIT; }
