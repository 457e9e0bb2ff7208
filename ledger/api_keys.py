"""API keys of tenants: created once and shown once, stored only as a SHA-256 hash."""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Sequence

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from ragq.ledger.db import rows_changed
from ragq.ledger.models import ApiKeyRow, utcnow

__all__ = ["create_api_key", "find_api_key", "hash_key", "list_api_keys", "revoke_api_key"]

KEY_PREFIX = "rq_"


def hash_key(key: str) -> str:
    """The stored form of a key: hex SHA-256 (keys are long random strings, so no salt needed)."""
    return hashlib.sha256(key.encode()).hexdigest()


def create_api_key(session: Session, *, tenant: str, acl: Sequence[str]) -> tuple[ApiKeyRow, str]:
    """A new key for ``tenant`` capped to ``acl``; returns its row and the key itself, which is
    not stored anywhere and cannot be shown again."""
    key = KEY_PREFIX + secrets.token_urlsafe(32)
    row = ApiKeyRow(tenant=tenant, key_hash=hash_key(key), acl=list(acl))
    session.add(row)
    session.flush()
    return row, key


def find_api_key(session: Session, *, key: str) -> ApiKeyRow | None:
    """The live (not revoked) key row for ``key``; None for an unknown or revoked key."""
    return session.scalar(select(ApiKeyRow).where(
        ApiKeyRow.key_hash == hash_key(key), ApiKeyRow.revoked_at.is_(None)))


def revoke_api_key(session: Session, *, key_id: str) -> bool:
    """Revoke a key by its id; True when it was live."""
    return bool(rows_changed(session.execute(update(ApiKeyRow).where(
        ApiKeyRow.id == key_id, ApiKeyRow.revoked_at.is_(None)).values(revoked_at=utcnow()))))


def list_api_keys(session: Session, *, tenant: str | None = None) -> list[ApiKeyRow]:
    """Keys (live and revoked), oldest first, of one tenant or all; never the keys themselves."""
    query = select(ApiKeyRow).order_by(ApiKeyRow.created_at)
    if tenant is not None:
        query = query.where(ApiKeyRow.tenant == tenant)
    return list(session.scalars(query))
