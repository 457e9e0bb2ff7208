"""The job flow in one process against the loopback model server: what bench/ledger_writes.py
and bench/job_cpu.py measure it on.

``RAGQ_PROVIDER=openai`` against bench/loopback_llm.py answering at once, a SQLite ledger in a
temporary folder, MiniLM and the embedded store of bench/offline_flow.py's ingest (cached under
/tmp), the steps run as the workers run them (``ragq.tasks.inline``). A bench builds its own
:class:`~ragq.tasks.runner.Runner` (``make_runner``) to time what it wants; the model server
runs in its own process, so its CPU is in no figure of this one. Nothing leaves 127.0.0.1.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from bench.loopback_llm import LoopbackLLM
from bench.offline_flow import COLLECTION, ingest
from ragq.embedding.minilm import MiniLmEmbedder
from ragq.evaluation.run import load_questions
from ragq.ledger import add_job, make_engine, session_scope, upgrade
from ragq.ledger.sql_flow import SqlFlowLedger
from ragq.orchestration.flow import FlowConfig
from ragq.schemas.document import DEFAULT_ACL
from ragq.settings import build_settings
from ragq.tasks.inline import InlineAdapters, InlineDispatcher
from ragq.tasks.runner import Runner
from ragq.vectorstore.edge import EdgeVectorStore
from ragq.workers.wiring import build_flow_config, build_provider, build_token_counter

DEFAULT_DATASET = Path(__file__).resolve().parents[2] / "shared" / "data" / "anthropic_docs"

MakeRunner = Callable[[SqlFlowLedger, InlineAdapters, FlowConfig], Runner]


def questions_of(dataset: Path) -> list[str]:
    """The question texts of an evaluation dataset folder, in order (``ragq eval``'s reading:
    a bad line is an error naming it)."""
    return [q.question for q in load_questions(dataset, None)]


@dataclass
class InlineFlow:
    """A runner and its dispatcher over one SQLite ledger."""

    runner: Runner
    ledger: SqlFlowLedger
    dispatcher: InlineDispatcher

    def add(self, question: str, acl: tuple[str, ...] = DEFAULT_ACL) -> str:
        """Record a queued job for ``question`` reading ``acl`` (default: ``["public"]``, the
        ACL of a ticket submitted without an API key); its id."""
        with session_scope(self.ledger.engine) as session:
            return add_job(session, batch_id=None, custom_id=None, position=None,
                           tenant="bench", collection=COLLECTION, question=question,
                           acl=list(acl)).id

    def job(self, question: str) -> str:
        """Record a job for ``question`` and run it to its end; its id."""
        job_id = self.add(question)
        self.dispatcher.run(job_id)
        return job_id


@contextlib.contextmanager
def loopback_flow(dataset: Path, make_runner: MakeRunner = Runner) -> Iterator[InlineFlow]:
    """The flow of the module's docstring, its corpus ingested; the environment's ``RAGQ_``
    provider settings are restored afterwards."""
    embedder = MiniLmEmbedder()
    root = ingest(dataset / "corpus.jsonl", embedder, EdgeVectorStore)
    saved = dict(os.environ)
    with LoopbackLLM(0) as llm, tempfile.TemporaryDirectory() as tmp, \
            EdgeVectorStore(root) as store:
        os.environ.update({"RAGQ_PROVIDER": "openai", "RAGQ_OPENAI_BASE_URL": llm.v1_url,
                           "RAGQ_OPENAI_API_KEY": "sk-bench", "RAGQ_CACHE_ENABLED": "false"})
        try:
            settings = build_settings()
            url = f"sqlite:///{tmp}/ledger.db"
            upgrade(url)
            ledger = SqlFlowLedger(make_engine(url))
            adapters = InlineAdapters(build_provider(settings, embedder), embedder, store)
            runner = make_runner(ledger, adapters,
                                 build_flow_config(settings, build_token_counter(settings)))
            yield InlineFlow(runner, ledger, InlineDispatcher(runner))
        finally:
            os.environ.clear()
            os.environ.update(saved)
