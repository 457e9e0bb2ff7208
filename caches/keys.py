"""Where each cache entry lives on the server. Every key starts with ``ragq:`` so the caches can
share the broker's database with Celery without ever touching its keys.

Evidence keys are namespaced by collection (``ragq:ev:{collection}:{retrieval_key}``) so one
collection's entries can be dropped at once, e.g. after a re-ingest.
"""

from __future__ import annotations

import hashlib
import json
import re

from ragq.orchestration.text import normalize_query

EVIDENCE_PREFIX = "ragq:ev"
PLAN_PREFIX = "ragq:plan"
#: Bumped when the plan contract, the planner's inputs or the key material change, so old plans
#: are never read. 2: questions normalized by ``orchestration.text.normalize_query``, which keeps
#: ``{n}`` placeholders.
PLAN_KEY_VERSION = 2

_GLOB_SPECIAL = re.compile(r"([*?\[\]\\])")


def evidence_key(collection: str, key: str) -> str:
    """The server key of evidence cached under ``key`` (a ``retrieval_key`` digest)."""
    return f"{EVIDENCE_PREFIX}:{collection}:{key}"


def evidence_pattern(collection: str) -> str:
    """A SCAN pattern matching every evidence key of ``collection`` and of no other."""
    escaped = _GLOB_SPECIAL.sub(r"\\\1", collection)
    return f"{EVIDENCE_PREFIX}:{escaped}:*"


def plan_key(question: str, *, provider: str, max_sub_queries: int) -> str:
    """The server key of the plan of ``question``: equal for questions that differ only in case,
    accents form, punctuation or whitespace; different per provider and per max_sub_queries,
    since either changes the plan a planner would make."""
    material = json.dumps(
        [PLAN_KEY_VERSION, normalize_query(question), provider, max_sub_queries], ensure_ascii=False
    )
    return f"{PLAN_PREFIX}:{hashlib.sha256(material.encode()).hexdigest()}"
