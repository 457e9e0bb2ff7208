"""Spooling a JSONL upload to a temporary file while counting its bytes, so a 5,000-ticket batch
is held once (parsed), not also as a request body, and an oversize one is refused early."""

from __future__ import annotations

import tempfile
from collections.abc import AsyncIterator
from typing import IO

from fastapi import Request
from starlette.datastructures import UploadFile

from ragq.errors import InputError, LimitExceededError

SPOOL_IN_MEMORY_BYTES = 1024 * 1024
JSONL_TYPES = ("application/jsonl", "application/x-ndjson", "application/x-jsonlines",
               "text/plain", "application/octet-stream")


def _too_big(size: int | str, max_bytes: int) -> LimitExceededError:
    return LimitExceededError(f"upload of {size} bytes is over the limit of {max_bytes} "
                              "(RAGQ_MAX_BATCH_BYTES)", limit="max_batch_bytes")


def check_declared_length(request: Request, max_bytes: int) -> None:
    """Refuse before reading when Content-Length already says the body is too big."""
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > max_bytes:
        raise _too_big(declared, max_bytes)


async def spool(chunks: AsyncIterator[bytes], max_bytes: int) -> IO[bytes]:
    """Copy ``chunks`` to a spooled temporary file, rewound; raises LimitExceededError as soon
    as more than ``max_bytes`` arrived."""
    out = tempfile.SpooledTemporaryFile(max_size=SPOOL_IN_MEMORY_BYTES)  # noqa: SIM115 - returned
    total = 0
    async for chunk in chunks:
        total += len(chunk)
        if total > max_bytes:
            out.close()
            raise _too_big(f"more than {max_bytes}", max_bytes)
        out.write(chunk)
    out.seek(0)
    return out


async def _upload_chunks(upload: UploadFile) -> AsyncIterator[bytes]:
    while chunk := await upload.read(64 * 1024):
        yield chunk


async def read_body(request: Request, max_bytes: int) -> tuple[IO[bytes], dict[str, str], str]:
    """The JSONL of a raw or multipart upload, spooled; plus the form fields and a source name.
    Raises InputError when a multipart request has no ``file`` part."""
    check_declared_length(request, max_bytes)
    content_type = request.headers.get("content-type", "")
    if content_type.startswith("multipart/form-data"):
        form = await request.form()
        upload = form.get("file")
        if not isinstance(upload, UploadFile):
            raise InputError("multipart upload needs a 'file' part with the JSONL tickets")
        fields = {k: v for k, v in form.items() if isinstance(v, str)}
        body = await spool(_upload_chunks(upload), max_bytes)
        return body, fields, upload.filename or "upload.jsonl"
    return await spool(request.stream(), max_bytes), {}, "upload.jsonl"
