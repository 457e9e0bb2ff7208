"""``/v1/sources``: the caller's tenant's sources (collections with a description)."""

from __future__ import annotations

from fastapi import APIRouter
from starlette.concurrency import run_in_threadpool

from ragq import submission
from ragq.api.deps import CallerDep, SettingsDep
from ragq.schemas.api import SOURCES_PATH, ErrorOut, SourceList, SourceOut

router = APIRouter(tags=["sources"], responses={401: {"model": ErrorOut}})


@router.get(SOURCES_PATH, response_model=SourceList)
async def list_sources(settings: SettingsDep, caller: CallerDep) -> SourceList:
    """The sources a ticket's ``sources`` may name, by name: what each holds (its registered
    description), its documents, and how often its chunks reached an answer."""
    listed = await run_in_threadpool(submission.source_list, settings, caller=caller)
    return SourceList(data=[SourceOut(**s) for s in listed])
