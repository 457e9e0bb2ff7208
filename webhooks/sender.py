"""Sending one signed webhook request: the :class:`WebhookSender` edge and its httpx
implementation, which maps every httpx error to :class:`WebhookSendError`."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Protocol

import httpx

from ragq.errors import WebhookSendError
from ragq.orchestration.backoff import parse_retry_after
from ragq.webhooks.signing import sign


@dataclass(frozen=True)
class SendOutcome:
    """The receiver's answer: its status and, when it sent one, ``Retry-After`` in seconds."""

    status_code: int
    retry_after_s: float | None = None

    @property
    def ok(self) -> bool:
        return 200 <= self.status_code < 300


class WebhookSender(Protocol):
    """Posts one webhook body, signed, to a URL."""

    def send(self, url: str, *, secret: str, msg_id: str, body: bytes) -> SendOutcome:
        """The receiver's answer. Raises WebhookSendError when there is no HTTP answer."""
        ...


def signed_headers(secret: str, *, msg_id: str, body: bytes, timestamp: int) -> dict[str, str]:
    """The Standard Webhooks headers for one attempt."""
    return {
        "content-type": "application/json",
        "webhook-id": msg_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": sign(secret, msg_id=msg_id, timestamp=timestamp, body=body),
    }


class HttpxWebhookSender:
    """Real HTTP, no redirects followed (a redirect could point anywhere the URL check refused)."""

    def __init__(self, *, timeout_s: float, user_agent: str = "ragq-webhooks/1"):
        self._timeout = timeout_s
        self._headers = {"user-agent": user_agent}

    def send(self, url: str, *, secret: str, msg_id: str, body: bytes) -> SendOutcome:
        headers = {**self._headers,
                   **signed_headers(secret, msg_id=msg_id, body=body, timestamp=int(time.time()))}
        try:
            response = httpx.post(url, content=body, headers=headers, timeout=self._timeout,
                                  follow_redirects=False)
        except httpx.TimeoutException as exc:
            raise WebhookSendError(f"webhook to {url} timed out: {exc}", url=url) from exc
        except httpx.TransportError as exc:
            raise WebhookSendError(f"webhook to {url} failed: {exc}", url=url) from exc
        except httpx.InvalidURL as exc:
            raise WebhookSendError(f"webhook URL {url} is invalid: {exc}", url=url,
                                   retryable=False) from exc
        except httpx.HTTPError as exc:
            raise WebhookSendError(f"webhook to {url} failed: {exc}", url=url) from exc
        return SendOutcome(response.status_code, parse_retry_after(response.headers))
