"""Webhooks out of ragq, after Standard Webhooks: signing and verifying, target URL
checks, and the sender adapter. Receivers verify deliveries with :func:`verify_signature`::

    from ragq.webhooks import verify_signature
    verify_signature(secret, msg_id=headers["webhook-id"],
                     timestamp=headers["webhook-timestamp"], body=raw_body,
                     signature=headers["webhook-signature"])  # raises WebhookSignatureError
"""

from ragq.webhooks.sender import (
    HttpxWebhookSender,
    SendOutcome,
    WebhookSender,
    pinned_request,
    signed_headers,
)
from ragq.webhooks.signing import new_secret, sign, verify_signature, webhook_id_for
from ragq.webhooks.urls import (
    PinnedUrl,
    UrlPolicy,
    check_url,
    pin_url,
    refused_kind,
    resolve_host,
)

__all__ = [
    # signing and verifying
    "new_secret",
    "sign",
    "verify_signature",
    "webhook_id_for",
    # target checks
    "PinnedUrl",
    "UrlPolicy",
    "check_url",
    "pin_url",
    "refused_kind",
    "resolve_host",
    # sending
    "HttpxWebhookSender",
    "SendOutcome",
    "WebhookSender",
    "pinned_request",
    "signed_headers",
]
