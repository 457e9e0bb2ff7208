"""Webhook target validation: http(s) only, and no loopback, private, link-local or reserved
addresses unless explicitly allowed (a webhook must not become a way into our own network)."""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable
from urllib.parse import urlsplit

from ragq.errors import WebhookUrlError

Resolver = Callable[[str], list[str]]
SCHEMES = ("http", "https")


def resolve_host(host: str) -> list[str]:
    """Every address ``host`` resolves to (an IP literal resolves to itself)."""
    infos = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    return sorted({str(info[4][0]) for info in infos})


def _refused_kind(address: str) -> str | None:
    ip = ipaddress.ip_address(address.split("%")[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped:
        ip = ip.ipv4_mapped
    for kind in ("loopback", "unspecified", "link_local", "multicast", "reserved", "private"):
        if getattr(ip, f"is_{kind}"):
            return kind.replace("_", "-")
    return None


def check_url(url: str, *, allow_private: bool, resolve: Resolver = resolve_host) -> str:
    """Return ``url`` when it may receive webhooks. Raises :class:`WebhookUrlError` saying why not:
    a scheme other than http(s), no host, a host that does not resolve, or (unless
    ``allow_private``) any resolved address that is loopback, private, link-local or reserved."""
    parts = urlsplit(url)
    if parts.scheme not in SCHEMES:
        raise WebhookUrlError(f"webhook URL {url!r} must start with http:// or https://",
                              url=url, reason="scheme")
    if not parts.hostname:
        raise WebhookUrlError(f"webhook URL {url!r} has no host", url=url, reason="host")
    if allow_private:
        return url
    try:
        addresses = resolve(parts.hostname)
    except (OSError, UnicodeError) as exc:
        raise WebhookUrlError(f"webhook host {parts.hostname!r} does not resolve: {exc}",
                              url=url, reason="unresolvable") from exc
    for address in addresses:
        kind = _refused_kind(address)
        if kind:
            raise WebhookUrlError(
                f"webhook URL {url!r} resolves to {kind} address {address}; refused "
                "(set RAGQ_WEBHOOK_ALLOW_PRIVATE=true to allow it on a trusted network)",
                url=url, reason=kind)
    return url
