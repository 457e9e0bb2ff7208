"""One error vocabulary, documented once (issue 35): docs/formats.md lists every code the paths
can answer with, and nothing else; every code the API and the ticket parser use is in it; the
default-ACL rule reads the same in docs/formats.md, docs/guide.md and the OpenAPI document."""

from __future__ import annotations

import re
from pathlib import Path

from ragq.api.errors import HTTP_CODES, STATUS
from ragq.schemas.error_codes import ERROR_CODES, TICKET_CODES
from ragq.schemas.ticket import DEFAULT_ACL_RULE
from tests.malformed.corpus import LINE_CASES
from tests.submission.test_ticket_paths import CASES

ROOT = Path(__file__).resolve().parents[2]


def _flat(text: str) -> str:
    return " ".join(text.split())


def _documented_codes() -> dict[str, str]:
    section = (ROOT / "docs" / "formats.md").read_text().split("## Error codes", 1)[1]
    return dict(re.findall(r"^\| `([a-z_0-9]+)` \| \w+ \| (.+) \|$", section, flags=re.M))


def test_the_docs_table_lists_every_code_with_its_meaning():
    assert _documented_codes() == ERROR_CODES


def test_every_code_the_paths_answer_with_is_in_the_vocabulary():
    api_codes = {code for _, _, code in STATUS} | set(HTTP_CODES.values())
    assert api_codes | {"limit_exceeded", "invalid_request"} <= set(ERROR_CODES)
    assert {case.code for case in LINE_CASES} <= set(TICKET_CODES)
    expected = [c.expect for c in CASES] + [e for c in CASES for e in c.per_path.values()]
    assert {e for e in expected if isinstance(e, str)} <= set(TICKET_CODES)


def test_the_default_acl_rule_reads_the_same_everywhere(tmp_path):
    from fastapi.testclient import TestClient

    from ragq.api import create_api
    from tests.fakes.broker import memory_settings

    assert '`["public"]` without a key' in DEFAULT_ACL_RULE and "API key's" in DEFAULT_ACL_RULE
    for page in (ROOT / "docs" / "formats.md", ROOT / "docs" / "guide.md"):
        assert _flat(DEFAULT_ACL_RULE) in _flat(page.read_text()), page.name
    with TestClient(create_api(memory_settings(tmp_path / "home"))) as client:
        schemas = client.get("/openapi.json").json()["components"]["schemas"]
    assert DEFAULT_ACL_RULE in schemas["JobCreate"]["properties"]["acl"]["description"]
    assert DEFAULT_ACL_RULE in schemas["BatchCreate"]["properties"]["tickets"]["description"]
