"""Confirming a source's inferred metadata fields (issue 37): the user's word that a field
guessed at ingest means what it says, after which sub-queries' constraints may filter on it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ragq.errors import InputError
from ragq.ledger import register_source, session_scope, source_schema
from ragq.orchestration.metadata_schema import confirm_fields
from ragq.schemas.metadata import MetadataSchema
from ragq.settings import Settings
from ragq.submission.access import Caller
from ragq.submission.views import source_detail
from ragq.workers.resources import resources_for


def confirm_source_fields(settings: Settings, *, caller: Caller, name: str,
                          fields: Sequence[str] = ()) -> dict[str, Any]:
    """Confirm the inferred fields ``fields`` (every field when empty) of the caller's tenant's
    source ``name``; returns the source as :func:`source_detail` shows it. Raises
    NotFoundError for a source the tenant does not have, InputError for a field it does not
    declare (the message lists those it does) or a source with no field at all."""
    source_detail(settings, caller=caller, name=name)  # NotFoundError for another's source
    with session_scope(resources_for(settings).engine) as session:
        stored = source_schema(session, tenant=caller.tenant, name=name)
        schema = MetadataSchema.model_validate(stored or {})
        if not schema.fields:
            raise InputError(f"source {name!r} has no metadata field to confirm (its documents "
                             "carry no usable metadata, and no schema file declared any)")
        try:
            confirmed = confirm_fields(schema, fields)
        except KeyError as exc:
            raise InputError(str(exc.args[0]), source="fields") from exc
        register_source(session, tenant=caller.tenant, name=name,
                        metadata_schema=confirmed.model_dump(mode="json"))
    return source_detail(settings, caller=caller, name=name)
