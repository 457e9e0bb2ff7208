"""`ragq keys create` and `ragq webhooks verify` as a user runs them."""

from __future__ import annotations

import json

from ragq.ledger import find_api_key, make_engine, session_scope
from ragq.settings import build_settings
from ragq.webhooks import new_secret, sign
from tests.cli.test_stack_commands import ragq


def test_keys_create_prints_a_key_whose_hash_finds_its_tenant_and_acl(tmp_path):
    home = tmp_path / "home"
    out = json.loads(ragq(home, "keys", "create", "--tenant", "acme", "--acl", "public,staff",
                          "--json").stdout)
    assert out["key"].startswith("rq_")
    plain = ragq(home, "keys", "create", "--tenant", "acme").stdout.strip().splitlines()[0]
    assert plain.startswith("rq_") and plain != out["key"]
    engine = make_engine(build_settings(home=home, database_url=None).ledger_url)
    with session_scope(engine) as session:
        row = find_api_key(session, key=out["key"])
        assert row is not None and row.tenant == "acme" and row.acl == ["public", "staff"]
        assert find_api_key(session, key=out["key"] + "x") is None


def test_webhooks_verify_accepts_a_genuine_body_and_refuses_a_tampered_one(tmp_path):
    import time

    secret, stamp, body = new_secret(), int(time.time()), b'{"type":"batch.completed"}'
    signature = sign(secret, msg_id="msg_1", timestamp=stamp, body=body)
    path = tmp_path / "body.json"
    path.write_bytes(body)
    args = ["webhooks", "verify", str(path), "--secret", secret, "--id", "msg_1",
            "--timestamp", str(stamp), "--signature", signature, "--json"]
    assert json.loads(ragq(tmp_path, *args).stdout) == {"valid": True}
    path.write_bytes(body + b" ")
    refused = ragq(tmp_path, *args, check=False)
    assert refused.returncode == 1 and json.loads(refused.stdout)["valid"] is False


def test_submit_refuses_a_bad_batch_budget_naming_the_key(tmp_path):
    tickets = tmp_path / "t.jsonl"
    tickets.write_text('{"custom_id": "a", "question": "q?"}\n')
    bad = ragq(tmp_path / "home", "submit", str(tickets), "--budget", '{"max_steps": -1}',
               check=False)
    assert bad.returncode == 1 and "--budget: max_steps" in bad.stderr
    unknown = ragq(tmp_path / "home", "submit", str(tickets), "--budget", '{"max_stepz": 3}',
                   check=False)
    assert unknown.returncode == 1 and "max_stepz" in unknown.stderr


def test_keys_list_and_revoke_as_a_user_runs_them(tmp_path):
    home = tmp_path / "home"
    made = json.loads(ragq(home, "keys", "create", "--tenant", "acme", "--json").stdout)
    ragq(home, "keys", "create", "--tenant", "other")
    listed = json.loads(ragq(home, "keys", "list", "--tenant", "acme", "--json").stdout)
    assert [(k["id"], k["revoked_at"]) for k in listed] == [(made["id"], None)]
    assert made["key"] not in ragq(home, "keys", "list").stdout  # only hashes are stored
    ragq(home, "keys", "revoke", made["id"])
    engine = make_engine(build_settings(home=home, database_url=None).ledger_url)
    with session_scope(engine) as session:
        assert find_api_key(session, key=made["key"]) is None  # the API now answers 401
    again = ragq(home, "keys", "revoke", made["id"], check=False)
    assert again.returncode == 1 and "no live key" in again.stderr
