"""Standard Webhooks signing: secrets, deterministic message ids, signatures and their check.

A secret is ``whsec_`` + base64 of random bytes; the signature of a delivery is
``v1,`` + base64(HMAC-SHA256(secret bytes, f"{id}.{timestamp}.{body}")).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import secrets
import time

from ragq.errors import WebhookSignatureError
from ragq.schemas.webhook import event_id as webhook_id_for

__all__ = ["new_secret", "secret_bytes", "sign", "verify_signature", "webhook_id_for"]

SECRET_PREFIX = "whsec_"
SIGNATURE_VERSION = "v1"


def new_secret(n_bytes: int = 24) -> str:
    """A fresh signing secret, ``whsec_`` + base64 of ``n_bytes`` random bytes."""
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(n_bytes)).decode()


def secret_bytes(secret: str) -> bytes:
    """The key bytes of a ``whsec_`` secret. Raises WebhookSignatureError when it is not one."""
    body = secret.removeprefix(SECRET_PREFIX)
    try:
        return base64.b64decode(body, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise WebhookSignatureError(
            f"webhook secret is not base64 after {SECRET_PREFIX!r}; copy it as the API gave it"
        ) from exc


def sign(secret: str, *, msg_id: str, timestamp: int, body: bytes) -> str:
    """The ``webhook-signature`` header value (``v1,<base64>``) for one delivery."""
    signed = f"{msg_id}.{timestamp}.".encode() + body
    mac = hmac.new(secret_bytes(secret), signed, hashlib.sha256).digest()
    return f"{SIGNATURE_VERSION},{base64.b64encode(mac).decode()}"


def verify_signature(
    secret: str, *, msg_id: str, timestamp: str | int, body: bytes, signature: str,
    tolerance_s: int = 300, now: float | None = None,
) -> None:
    """Check a received webhook; returns None when it is genuine and fresh.

    ``signature`` is the ``webhook-signature`` header (space-separated ``v1,…`` entries; any one
    may match). The comparison is constant-time. Raises :class:`WebhookSignatureError` when the
    timestamp is not an integer, is more than ``tolerance_s`` seconds from ``now`` (replay), or
    no signature matches.
    """
    try:
        stamp = int(timestamp)
    except (TypeError, ValueError) as exc:
        raise WebhookSignatureError(f"webhook-timestamp {timestamp!r} is not an integer") from exc
    current = time.time() if now is None else now
    if abs(current - stamp) > tolerance_s:
        raise WebhookSignatureError(
            f"webhook-timestamp {stamp} is more than {tolerance_s}s from now ({int(current)})"
        )
    expected = sign(secret, msg_id=msg_id, timestamp=stamp, body=body)
    for candidate in signature.split():
        if hmac.compare_digest(candidate.encode(), expected.encode()):
            return
    raise WebhookSignatureError("no webhook-signature entry matches this secret and body")
