// The parts of libsystemd framerated uses: readiness and status notification,
// the watchdog, socket activation, and structured journal logging.
// Only FrameRateSystemd imports this module.
#ifndef FRAMERATED_CSYSTEMD_SHIM_H
#define FRAMERATED_CSYSTEMD_SHIM_H

#include <sys/uio.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-journal.h>

#endif
