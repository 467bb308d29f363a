"""The reconnect rule every framerated client follows (docs/protocol.md, "Reconnecting").

The same as the Swift client's ``ReconnectPolicy`` and the C client's
``fr_reconnect_policy``: after the connection drops, attempt ``n`` (0 is the
first) waits ``min(maximum_delay, initial_delay * multiplier ** n)`` seconds,
stretched by a random factor in ``[1 - jitter, 1 + jitter]`` and capped at
``maximum_delay`` again. With the defaults the waits are about 10, 20, 40 …
640 ms, then 1 s until the daemon answers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

__all__ = ["ReconnectPolicy"]


@dataclass(frozen=True)
class ReconnectPolicy:
    """Backoff and give-up limit of a reconnecting connection.

    Attributes:
        initial_delay: the wait before the first attempt, seconds (default 0.01).
        maximum_delay: the longest wait, seconds, jitter included (default 1).
        multiplier: the factor each wait grows by, at least 1 (default 2).
        jitter: how far each wait is randomly stretched or shrunk, a fraction in
            ``[0, 1]`` (default 0.1: ±10 %), so the clients of a restarted daemon
            do not all connect at once.
        maximum_attempts: failed attempts in a row before the connection gives
            up; ``None`` (default) sets no limit (``reconnect_timeout`` of
            :func:`framerate.connect` still applies).
    """

    initial_delay: float = 0.010
    maximum_delay: float = 1.0
    multiplier: float = 2.0
    jitter: float = 0.1
    maximum_attempts: Optional[int] = None

    def __post_init__(self) -> None:
        if not (math.isfinite(self.initial_delay) and math.isfinite(self.maximum_delay)
                and 0 <= self.initial_delay <= self.maximum_delay):
            raise ValueError("need 0 <= initial_delay <= maximum_delay, both finite")
        if not (math.isfinite(self.multiplier) and self.multiplier >= 1):
            raise ValueError("multiplier must be finite and at least 1")
        if not (0 <= self.jitter <= 1):
            raise ValueError("jitter must be within 0...1")
        if self.maximum_attempts is not None and self.maximum_attempts < 1:
            raise ValueError("maximum_attempts must be positive (or None)")

    def base_delay(self, attempt: int) -> float:
        """The wait before attempt ``attempt`` (0 first) without jitter, seconds:
        ``min(maximum_delay, initial_delay * multiplier ** attempt)``."""
        delay = self.initial_delay
        for _ in range(max(0, attempt)):
            if delay >= self.maximum_delay:
                break
            delay *= self.multiplier
        return min(delay, self.maximum_delay)

    def delay(self, attempt: int, random: float) -> float:
        """The wait before attempt ``attempt`` with jitter, seconds, for ``random``
        in ``[0, 1)`` (0.5: no jitter): ``base_delay(attempt) * (1 + jitter * (2 * random - 1))``,
        at most ``maximum_delay``."""
        random = min(max(random, 0.0), 1.0) if random == random else 0.0
        stretched = self.base_delay(attempt) * (1 + self.jitter * (2 * random - 1))
        return max(0.0, min(stretched, self.maximum_delay))

    def allows_attempt(self, attempt: int) -> bool:
        """Whether attempt ``attempt`` (0 first) may still be made."""
        return self.maximum_attempts is None or attempt < self.maximum_attempts
