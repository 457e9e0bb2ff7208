"""Sending one signed webhook request: the :class:`WebhookSender` edge and its httpx
implementation, which maps every httpx error to :class:`WebhookSendError`."""

from __future__ import annotations

import ipaddress
import time
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import urlsplit, urlunsplit

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

    def send(self, url: str, *, secret: str, msg_id: str, body: bytes,
             address: str | None = None) -> SendOutcome:
        """The receiver's answer. ``address`` is the IP the URL's host was checked at: the
        request goes there, with the URL's host as Host header and TLS server name. Raises
        WebhookSendError when there is no HTTP answer."""
        ...


def signed_headers(secret: str, *, msg_id: str, body: bytes, timestamp: int) -> dict[str, str]:
    """The Standard Webhooks headers for one attempt."""
    return {
        "content-type": "application/json",
        "webhook-id": msg_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": sign(secret, msg_id=msg_id, timestamp=timestamp, body=body),
    }


def pinned_request(url: str, address: str) -> tuple[str, dict[str, str], dict[str, Any]]:
    """(URL to send to, extra headers, request extensions) so that a request for ``url``
    connects to ``address`` and nowhere else: the URL names the IP, the ``Host`` header and the
    TLS SNI (and certificate check) name the original host."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    ip = ipaddress.ip_address(address.split("%")[0])
    netloc = f"[{ip}]" if ip.version == 6 else str(ip)
    port = f":{parts.port}" if parts.port else ""
    shown_host = f"[{host}]" if ":" in host else host
    target = urlunsplit((parts.scheme, netloc + port, parts.path, parts.query, ""))
    extensions: dict[str, Any] = {"sni_hostname": host} if parts.scheme == "https" else {}
    return target, {"host": shown_host + port}, extensions


class HttpxWebhookSender:
    """Real HTTP, no redirects followed (a redirect could point anywhere the URL check refused),
    connecting to the checked address when one is given (DNS is not asked again)."""

    def __init__(self, *, timeout_s: float, user_agent: str = "ragq-webhooks/1"):
        self._timeout = timeout_s
        self._headers = {"user-agent": user_agent}

    def send(self, url: str, *, secret: str, msg_id: str, body: bytes,
             address: str | None = None) -> SendOutcome:
        headers = {**self._headers,
                   **signed_headers(secret, msg_id=msg_id, body=body, timestamp=int(time.time()))}
        target, extensions = url, dict[str, Any]()
        try:
            if address is not None:
                target, host, extensions = pinned_request(url, address)
                headers |= host
            with httpx.Client(timeout=self._timeout, follow_redirects=False) as client:
                response = client.post(target, content=body, headers=headers,
                                       extensions=extensions)
        except httpx.TimeoutException as exc:
            raise WebhookSendError(f"webhook to {url} timed out: {exc}", url=url) from exc
        except httpx.TransportError as exc:
            raise WebhookSendError(f"webhook to {url} failed: {exc}", url=url) from exc
        except (httpx.InvalidURL, ValueError) as exc:
            raise WebhookSendError(f"webhook URL {url} is invalid: {exc}", url=url,
                                   retryable=False) from exc
        except httpx.HTTPError as exc:
            raise WebhookSendError(f"webhook to {url} failed: {exc}", url=url) from exc
        return SendOutcome(response.status_code, parse_retry_after(response.headers))
