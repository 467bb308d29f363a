/* libframerate: the reconnect backoff, a pure function of the policy, the
 * attempt number and a random number (docs/protocol.md, "Reconnecting"; the
 * Swift client's ReconnectPolicy.delay(attempt:random:)). */
#include "fr_internal.h"

#include <math.h>

int fr__policy_valid(const fr_reconnect_policy *p) {
    return p != NULL && isfinite(p->initial_delay_ms) && isfinite(p->maximum_delay_ms) && p->initial_delay_ms >= 0 &&
           p->maximum_delay_ms >= p->initial_delay_ms && isfinite(p->multiplier) && p->multiplier >= 1 &&
           isfinite(p->jitter) && p->jitter >= 0 && p->jitter <= 1 && p->maximum_attempts >= 0;
}

double fr_reconnect_delay_ms(const fr_reconnect_policy *p, unsigned attempt, double random) {
    if (!fr__policy_valid(p)) return 0;
    /* min(maximum, initial * multiplier^attempt), exact for small exponents, capped once it overflows. */
    double base = p->initial_delay_ms;
    for (unsigned i = 0; i < attempt && base < p->maximum_delay_ms; i++) base *= p->multiplier;
    if (!(base <= p->maximum_delay_ms)) base = p->maximum_delay_ms;
    if (!(random >= 0)) random = 0; /* also NaN */
    if (random > 1) random = 1;
    double delay = base * (1 + p->jitter * (2 * random - 1));
    if (delay > p->maximum_delay_ms) delay = p->maximum_delay_ms;
    return delay > 0 ? delay : 0;
}
