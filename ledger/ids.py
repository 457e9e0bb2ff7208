"""Readable, time-ordered row ids such as ``job_01J9Z3K4M5N6P7Q8R9S0T1V2W3``.

The prefix tells a human (and a log line) what kind of row an id names; the time-ordered body keeps
B-tree inserts local and lets ids sort by creation without a timestamp column.
"""

from __future__ import annotations

import os
import re
import time

__all__ = ["new_id"]

_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_PREFIX = re.compile(r"[a-z]{2,8}")


def new_id(prefix: str) -> str:
    """Return ``"{prefix}_"`` followed by a 26-character ULID-style body (ms time + 80 random bits).

    Raises ``ValueError`` when ``prefix`` is not 2-8 lowercase ASCII letters, so a typo such as
    ``"job_"`` or ``"Job"`` fails where it is written instead of producing ids nobody can grep.
    """
    if not _PREFIX.fullmatch(prefix):
        raise ValueError(
            f"id prefix {prefix!r} must be 2-8 lowercase letters without the underscore, e.g. 'job'"
        )
    value = (time.time_ns() // 1_000_000) << 80 | int.from_bytes(os.urandom(10), "big")
    chars = []
    for _ in range(26):
        value, digit = divmod(value, 32)
        chars.append(_CROCKFORD[digit])
    return f"{prefix}_{''.join(reversed(chars))}"
