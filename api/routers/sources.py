"""``/v1/sources``: the caller's tenant's sources (collections with a description), each with
its metadata schema, and the confirmation of fields inferred at ingest."""

from __future__ import annotations

from fastapi import APIRouter
from starlette.concurrency import run_in_threadpool

from ragq import submission
from ragq.api.deps import CallerDep, SettingsDep
from ragq.schemas.api import (
    SOURCE_CONFIRM_PATH,
    SOURCE_PATH,
    SOURCES_PATH,
    ConfirmFieldsIn,
    ErrorOut,
    SourceDetailOut,
    SourceList,
    SourceOut,
)
from ragq.submission.source_schemas import confirm_source_fields

router = APIRouter(tags=["sources"], responses={401: {"model": ErrorOut}})


@router.get(SOURCES_PATH, response_model=SourceList)
async def list_sources(settings: SettingsDep, caller: CallerDep) -> SourceList:
    """The sources a ticket's ``sources`` may name, by name: what each holds (its registered
    description), its documents, and how often its chunks reached an answer."""
    listed = await run_in_threadpool(submission.source_list, settings, caller=caller)
    return SourceList(data=[SourceOut(**s) for s in listed])


@router.get(SOURCE_PATH, response_model=SourceDetailOut,
            responses={404: {"model": ErrorOut}, 422: {"model": ErrorOut}})
async def get_source(name: str, settings: SettingsDep, caller: CallerDep) -> SourceDetailOut:
    """One source with its metadata schema: each field's type, description, values, and
    whether it was inferred at ingest (shown, not filtered on until confirmed)."""
    detail = await run_in_threadpool(
        lambda: submission.source_detail(settings, caller=caller, name=name))
    return SourceDetailOut(**detail)


@router.post(SOURCE_CONFIRM_PATH, response_model=SourceDetailOut,
             responses={404: {"model": ErrorOut}, 422: {"model": ErrorOut}})
async def confirm_fields(name: str, body: ConfirmFieldsIn, settings: SettingsDep,
                         caller: CallerDep) -> SourceDetailOut:
    """Confirm inferred fields (every field when ``fields`` is empty): from the next search
    on, a sub-query's constraints may filter on them. 422 names a field the source does not
    declare."""
    detail = await run_in_threadpool(lambda: confirm_source_fields(
        settings, caller=caller, name=name, fields=body.fields))
    return SourceDetailOut(**detail)
