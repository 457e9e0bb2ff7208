"""Flower's credentials: Flower never runs with its unauthenticated API. `ragq up --flower`
generates a password once, keeps it in the home's run dir (mode 0600, readable by its owner
only) and hands it to Flower as basic auth through the environment (not argv, which ``ps``
shows to every local user)."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from ragq.settings import Settings

FLOWER_USER = "ragq"


def flower_auth_file(settings: Settings) -> Path:
    """Where the Flower password is kept."""
    return settings.run_dir / "flower.auth"


def flower_password(settings: Settings) -> str:
    """The Flower password of this home, generated (and stored with mode 0600) on first use."""
    path = flower_auth_file(settings)
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_file():
        path.chmod(0o600)
        return path.read_text().strip()
    password = secrets.token_urlsafe(24)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(password + "\n")
    return password


def flower_env(settings: Settings) -> dict[str, str]:
    """The environment that turns Flower's basic auth on (its API then needs it too)."""
    return {"FLOWER_BASIC_AUTH": f"{FLOWER_USER}:{flower_password(settings)}"}
