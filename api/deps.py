"""What routes get injected: the settings of their app and the caller behind the API key."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from ragq.errors import AuthError
from ragq.ledger import find_api_key, session_scope
from ragq.settings import Settings
from ragq.submission import Caller

bearer = HTTPBearer(auto_error=False, description="An API key from `ragq keys create`.")


def get_settings(request: Request) -> Settings:
    """The settings the app was created with."""
    settings: Settings = request.app.state.settings
    return settings


def get_caller(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)],
) -> Caller:
    """The tenant and ACL cap of the request's API key. Raises AuthError (401) when the key is
    missing, unknown or revoked."""
    if credentials is None or credentials.scheme.lower() != "bearer":
        raise AuthError("missing API key: send Authorization: Bearer <key> (ragq keys create)")
    with session_scope(request.app.state.engine, readonly=True) as session:
        row = find_api_key(session, key=credentials.credentials)
        if row is None:
            raise AuthError("unknown or revoked API key")
        return Caller(row.tenant, tuple(row.acl), name=row.id)


SettingsDep = Annotated[Settings, Depends(get_settings)]
CallerDep = Annotated[Caller, Depends(get_caller)]
