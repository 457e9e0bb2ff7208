"""The throughput bench's comparison: the same questions through LlamaIndex's
SubQuestionQueryEngine, on the same loopback model server, corpus and MiniLM embedder.

Used by bench/throughput.py (``pip install -e '.[bench]'`` installs LlamaIndex). The corpus is
chunked as ragq's ingest chunks it (``RAGQ_CHUNK_WORDS`` words, the same overlap), each chunk
embedded with ragq's MiniLM (``embedding_text``: title and text), vectors cached on disk by
bench/embed_cache.py, in LlamaIndex's in-memory vector store; a question's embedding runs the
same MiniLM in this process, in a thread. One query-engine tool over the collection with
``similarity_top_k`` = ``RAGQ_SEARCH_TOP_K``; the engine asks its sub-question generator (the
loopback server answers one sub-question, the question itself), answers it from the tool, then
synthesizes. The generator is LlamaIndex's prompt-based ``LLMQuestionGenerator`` (JSON in the
answer text): the function-calling one wants one more package, llama-index-question-gen-openai,
and makes the same single call. ``N`` questions run at once: ``asyncio.gather`` of ``aquery``.

Nothing is downloaded: NLTK and tiktoken read the data LlamaIndex ships in its package
(``_static``), and the LLM is LlamaIndex's OpenAI class pointed at the loopback ``base_url``.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ragq.orchestration.chunking import chunk_document, embedding_text
from ragq.schemas.document import Document
from ragq.settings import Settings

MODEL = "gpt-4o-mini"  # a name LlamaIndex knows (context window, chat model); the server ignores it
PACKAGES = ("llama_index.core", "llama_index.llms.openai")


def missing() -> str | None:
    """Why the comparison cannot run (None when it can)."""
    absent = [p for p in PACKAGES if _spec(p) is None]
    if absent:
        return (f"{', '.join(absent)} not installed: pip install -e '.[bench]' "
                "(llama-index-core, llama-index-llms-openai)")
    return None


def _spec(name: str) -> object:
    try:
        return importlib.util.find_spec(name)
    except ModuleNotFoundError:
        return None


def _use_shipped_data() -> None:
    """Point NLTK and tiktoken at the data inside llama_index.core, before it is imported."""
    spec = importlib.util.find_spec("llama_index.core")
    assert spec and spec.origin
    static = Path(spec.origin).parent / "_static"
    os.environ.setdefault("NLTK_DATA", str(static / "nltk_cache"))
    os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(static / "tiktoken_cache"))


def _embedding_class() -> type:
    from llama_index.core.base.embeddings.base import BaseEmbedding
    from pydantic import PrivateAttr

    class RagqMiniLm(BaseEmbedding):
        """ragq's MiniLM (any ragq Embedder) as a LlamaIndex embedding model."""

        _embedder: Any = PrivateAttr()

        def __init__(self, embedder: Any, **kwargs: Any):
            super().__init__(model_name=embedder.model_id, **kwargs)
            self._embedder = embedder

        def _get_query_embedding(self, query: str) -> list[float]:
            return self._embedder.embed([query])[0]

        async def _aget_query_embedding(self, query: str) -> list[float]:
            return await asyncio.to_thread(self._get_query_embedding, query)

        def _get_text_embedding(self, text: str) -> list[float]:
            return self._embedder.embed([text])[0]

        def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
            return self._embedder.embed(texts)

    return RagqMiniLm


def build_engine(settings: Settings, corpus: Path, v1_url: str) -> Any:
    """A SubQuestionQueryEngine over ``corpus`` whose LLM is the server at ``v1_url``."""
    _use_shipped_data()
    from llama_index.core import Settings as LlamaSettings
    from llama_index.core import VectorStoreIndex
    from llama_index.core.query_engine import SubQuestionQueryEngine
    from llama_index.core.question_gen import LLMQuestionGenerator
    from llama_index.core.schema import TextNode
    from llama_index.core.tools import QueryEngineTool, ToolMetadata
    from llama_index.llms.openai import OpenAI

    from bench.embed_cache import CachedEmbeddings
    from ragq.embedding import MiniLmEmbedder

    minilm = MiniLmEmbedder()
    docs = [Document(**json.loads(line)) for line in corpus.read_text().splitlines()
            if line.strip()]
    chunks = [c for d in docs for c in chunk_document(
        d, collection="llamaindex", size_words=settings.chunk_words,
        overlap_words=settings.chunk_overlap_words)]
    vectors = CachedEmbeddings(minilm).embed([embedding_text(c) for c in chunks],
                                             label=f"{corpus.parent.name} for LlamaIndex")
    nodes = [TextNode(id_=c.chunk_id, text=c.text, embedding=v,
                      metadata={"doc_id": c.doc_id, "title": c.title or ""})
             for c, v in zip(chunks, vectors, strict=True)]
    embed_model = _embedding_class()(minilm)
    llm = OpenAI(model=MODEL, api_base=v1_url, api_key="sk-bench", max_tokens=256,
                 max_retries=0, timeout=max(120.0, settings.openai_timeout_s))
    LlamaSettings.llm, LlamaSettings.embed_model = llm, embed_model  # no default OpenAI anywhere
    index = VectorStoreIndex(nodes, embed_model=embed_model)
    tool = QueryEngineTool(
        query_engine=index.as_query_engine(llm=llm, similarity_top_k=settings.search_top_k),
        metadata=ToolMetadata(name=corpus.parent.name,
                              description=f"documentation pages of {corpus.parent.name}"))
    return SubQuestionQueryEngine.from_defaults(
        query_engine_tools=[tool], llm=llm, use_async=True, verbose=False,
        question_gen=LLMQuestionGenerator.from_defaults(llm=llm))


class Baseline:
    """The engine and the one event loop every run uses (LlamaIndex's OpenAI client keeps its
    connections on the loop it first ran on). ``close()`` when done."""

    def __init__(self, settings: Settings, corpus: Path, v1_url: str):
        self.engine = build_engine(settings, corpus, v1_url)
        self._runner = asyncio.Runner()

    def run(self, questions: Sequence[str]) -> tuple[float, list[str]]:
        """Ask every question at once; (wall seconds, the answers)."""

        async def all_at_once() -> list[Any]:
            return await asyncio.gather(*(self.engine.aquery(q) for q in questions))

        started = time.perf_counter()
        answers = self._runner.run(all_at_once())
        return time.perf_counter() - started, [str(a) for a in answers]

    def close(self) -> None:
        self._runner.close()
