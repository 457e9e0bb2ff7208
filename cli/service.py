"""`ragq serve`, `ragq keys create|list|revoke` and `ragq webhooks verify`: the HTTP service's
commands."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from ragq.cli.helptext import App
from ragq.cli.output import console, emit_json, fail
from ragq.errors import WebhookSignatureError
from ragq.settings import Settings

keys_app = App(help="API keys of tenants.", no_args_is_help=True)
webhooks_app = App(help="Webhook helpers for receivers.", no_args_is_help=True)
JsonFlag = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")]


def serve(settings: Settings, *, host: str | None, port: int | None) -> None:
    """Serve the HTTP API in the foreground."""
    from ragq.api import serve as run
    from ragq.ledger import upgrade

    upgrade(settings.ledger_url)
    host, port = host or settings.api_host, port or settings.api_port
    console.print(f"ragq API on http://{host}:{port} (OpenAPI at /docs)", highlight=False)
    run(settings, host=host, port=port)


def sweeper(settings: Settings) -> None:
    """Run one replica of the recovery sweep in the foreground until SIGTERM or Ctrl-C."""
    import logging
    import signal
    import threading

    from ragq.ledger import upgrade
    from ragq.workers.sweeper import run_sweeper

    logging.basicConfig(level=logging.INFO,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    upgrade(settings.ledger_url)
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    console.print(f"ragq sweeper: a round every {settings.sweeper_interval_s:g}s, "
                  f"jobs idle {settings.stall_after_s:g}s resumed", highlight=False)
    run_sweeper(settings, stop)


def create_key(settings: Settings, *, tenant: str, acl: list[str], as_json: bool) -> None:
    """Create a key, print it once."""
    from ragq.ledger import create_api_key, session_scope, upgrade
    from ragq.workers.resources import resources_for

    upgrade(settings.ledger_url)
    with session_scope(resources_for(settings).engine) as session:
        row, key = create_api_key(session, tenant=tenant, acl=acl)
    if as_json:
        emit_json({"key": key, "id": row.id, "tenant": tenant, "acl": acl})
    else:
        typer.echo(key)
        console.print(f"tenant {tenant}, acl {','.join(acl)} — shown once; store it now",
                      style="dim", highlight=False)


def list_keys(settings: Settings, *, tenant: str | None, as_json: bool) -> None:
    """Every key's id, tenant, ACL and state (never the key: only its hash is stored)."""
    from ragq.ledger import list_api_keys, session_scope
    from ragq.workers.resources import resources_for

    with session_scope(resources_for(settings).engine, readonly=True) as session:
        rows: list[dict[str, Any]] = [{"id": r.id, "tenant": r.tenant, "acl": list(r.acl),
                 "created_at": r.created_at.isoformat(),
                 "revoked_at": r.revoked_at.isoformat() if r.revoked_at else None}
                for r in list_api_keys(session, tenant=tenant)]
    if as_json:
        emit_json(rows)
        return
    for r in rows:
        state = f"revoked {r['revoked_at']}" if r["revoked_at"] else "live"
        console.print(f"{r['id']}  {r['tenant']}  acl={','.join(r['acl'])}  {state}",
                      highlight=False)


def revoke_key(settings: Settings, *, key_id: str, as_json: bool) -> None:
    """Revoke a key by id: its requests get 401 from then on."""
    from ragq.ledger import revoke_api_key, session_scope
    from ragq.workers.resources import resources_for

    with session_scope(resources_for(settings).engine) as session:
        revoked = revoke_api_key(session, key_id=key_id)
    if not revoked:
        fail(f"no live key {key_id} (see `ragq keys list`)")
    if as_json:
        emit_json({"id": key_id, "revoked": True})
    else:
        console.print(f"revoked {key_id}", highlight=False)


def verify(secret: str, *, msg_id: str, timestamp: str, signature: str, body_file: Path,
           tolerance_s: int, as_json: bool) -> None:
    """Check a received webhook; exit 1 when it does not verify."""
    from ragq.webhooks import verify_signature

    try:
        verify_signature(secret, msg_id=msg_id, timestamp=timestamp, body=body_file.read_bytes(),
                         signature=signature, tolerance_s=tolerance_s)
    except WebhookSignatureError as exc:
        if as_json:
            emit_json({"valid": False, "reason": str(exc)})
            raise SystemExit(1) from exc
        fail(f"signature does not verify: {exc}")
    if as_json:
        emit_json({"valid": True})
    else:
        console.print("[green]valid[/]: signed with this secret, timestamp within tolerance")
