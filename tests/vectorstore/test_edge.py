"""What only the embedded store promises: one owning process, durable files, thread-safe reads,
and every qdrant-edge error translated into ours."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import qdrant_edge as qe

from ragq.errors import CollectionNotFoundError, RetrievalError, VectorStoreLockedError
from ragq.vectorstore import (
    CollectionLayoutError,
    EdgeStoreLockedError,
    EdgeVectorStore,
    StoreClosedError,
    VectorDimensionError,
)
from ragq.vectorstore.edge_errors import translate_edge_errors
from ragq.vectorstore.locking import LOCK_FILE
from tests.vectorstore.points import DIM, axis, point

REPO = Path(__file__).resolve().parents[2]

TRY_OPEN = """
import json, sys
from pathlib import Path
from ragq.vectorstore import EdgeVectorStore, EdgeStoreLockedError
try:
    EdgeVectorStore(Path(sys.argv[1])).close()
    print(json.dumps({"opened": True}))
except EdgeStoreLockedError as exc:
    print(json.dumps({"opened": False, "owner_pid": exc.owner_pid, "message": str(exc)}))
"""

HOLD_OPEN = """
import sys, time
from pathlib import Path
from ragq.vectorstore import EdgeVectorStore
store = EdgeVectorStore(Path(sys.argv[1]))
store.ensure_collection("held", 8)
print("ready", flush=True)
time.sleep(120)
"""


def python(code: str, *args: str, **kwargs) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen(
        [sys.executable, "-c", code, *args], env=env, text=True, stdout=subprocess.PIPE, **kwargs
    )


def try_open_in_another_process(root: Path) -> dict:
    child = python(TRY_OPEN, str(root))
    out, _ = child.communicate(timeout=120)
    assert child.returncode == 0, out
    return json.loads(out)


def test_a_second_process_is_refused_with_the_owner_pid_and_path(tmp_path):
    root = tmp_path / "vectors"
    with EdgeVectorStore(root):
        seen = try_open_in_another_process(root)
        assert seen["opened"] is False
        assert seen["owner_pid"] == os.getpid()
        assert str(root) in seen["message"] and str(os.getpid()) in seen["message"]
        assert (root / LOCK_FILE).read_text().strip() == str(os.getpid())
    assert try_open_in_another_process(root) == {"opened": True}


def test_the_lock_dies_with_its_owner_so_a_crash_leaves_nothing_to_clean(tmp_path):
    root = tmp_path / "vectors"
    child = python(HOLD_OPEN, str(root))
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "ready"
        with pytest.raises(EdgeStoreLockedError) as locked:
            EdgeVectorStore(root)
        assert locked.value.owner_pid == child.pid
        assert isinstance(locked.value, VectorStoreLockedError)
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
    with EdgeVectorStore(root) as store:
        assert store.collections() == ["held"]


def test_a_second_store_in_the_same_process_is_refused_too(tmp_path):
    with EdgeVectorStore(tmp_path), pytest.raises(EdgeStoreLockedError):
        EdgeVectorStore(tmp_path)


def test_data_and_dimension_survive_close_and_reopen(tmp_path):
    with EdgeVectorStore(tmp_path / "v") as store:
        store.ensure_collection("docs", DIM)
        store.upsert("docs", [point("a", i, axis(i)) for i in range(3)])
    with EdgeVectorStore(tmp_path / "v") as store:
        assert store.collections() == ["docs"]
        assert store.count("docs") == 3
        assert store.search("docs", axis(1), top_k=1)[0].payload["chunk_id"] == "a:1"
        with pytest.raises(VectorDimensionError):
            store.ensure_collection("docs", DIM + 1)


def test_a_collection_made_before_title_vectors_is_refused_with_the_fix(tmp_path):
    root = tmp_path / "v"
    (root / "old").mkdir(parents=True)
    new_shard(root / "old" / "shard", size=DIM).close()  # one unnamed vector
    (root / "old" / "collection.json").write_text(json.dumps({"dim": DIM, "distance": "cosine"}))
    with EdgeVectorStore(root) as store:
        for attempt in (
            lambda: store.ensure_collection("old", DIM),
            lambda: store.search("old", axis(0), 1),
        ):
            with pytest.raises(CollectionLayoutError, match="ingest into a new collection") as e:
                attempt()
            assert e.value.collection == "old"
        store.ensure_collection("new", DIM)  # the rest of the root is usable
        assert store.collections() == ["new", "old"]


def test_reads_do_not_wait_for_a_writer(tmp_path):
    """The engine is safe for reads during writes, so the store must not serialise them."""
    with EdgeVectorStore(tmp_path) as store:
        store.ensure_collection("docs", DIM)
        store.upsert("docs", [point("a", 0, axis(0))])
        result: list[int] = []
        with store._open["docs"].write_lock:  # a writer is mid-write
            reader = threading.Thread(
                target=lambda: result.append(len(store.search("docs", axis(0), 5)))
            )
            reader.start()
            reader.join(timeout=10)
            assert result == [1]


def test_the_store_root_and_lock_are_created_on_demand(tmp_path):
    root = tmp_path / "deep" / "vectors"
    with EdgeVectorStore(root) as store:
        assert store.collections() == []
        assert (root / LOCK_FILE).exists()
    assert (root / LOCK_FILE).read_text() == ""


# --- every qdrant-edge error, provoked for real, arrives as ours ------------------------------


@pytest.fixture
def shard_path(tmp_path: Path) -> Path:
    return tmp_path / "shard"


def new_shard(path: Path, size: int = 4) -> qe.EdgeShard:
    config = qe.EdgeConfig(vectors=qe.EdgeVectorParams(size=size, distance=qe.Distance.Cosine))
    return qe.EdgeShard.create(str(path), config)


def upsert_raw(shard: qe.EdgeShard, point_id: str, vector: list[float], payload: dict) -> None:
    shard.update(qe.UpdateOperation.upsert_points([qe.Point(point_id, vector, payload)]))


UUID = "7c0a1a3e-8f1e-4d7e-9b35-5d6c1c7a9e01"


def wrong_vector_size(p: Path) -> None:
    upsert_raw(new_shard(p), UUID, [1.0, 0.0, 0.0], {})


def load_with_another_size(p: Path) -> None:
    new_shard(p, size=4).close()
    qe.EdgeShard.load(str(p), new_config(8))


def load_with_other_vector_names(p: Path) -> None:
    new_shard(p, size=4).close()  # one unnamed vector, as before title vectors
    params = qe.EdgeVectorParams(size=4, distance=qe.Distance.Cosine)
    qe.EdgeShard.load(str(p), qe.EdgeConfig(vectors={"text": params, "title": params}))


def load_while_open(p: Path) -> None:
    _still_open = new_shard(p)  # the engine allows one open shard per directory
    qe.EdgeShard.load(str(p))


def use_after_close(p: Path) -> None:
    shard = new_shard(p)
    shard.close()
    shard.count(qe.CountRequest())


def load_missing(p: Path) -> None:
    qe.EdgeShard.load(str(p / "nowhere"))


def id_not_a_uuid(p: Path) -> None:
    upsert_raw(new_shard(p), "not-a-uuid", [1.0, 0.0, 0.0, 0.0], {})


def payload_not_json(p: Path) -> None:
    upsert_raw(new_shard(p), UUID, [1.0, 0.0, 0.0, 0.0], {"x": object()})


def create_over_data(p: Path) -> None:
    new_shard(p).close()
    new_shard(p)


def new_config(size: int) -> qe.EdgeConfig:
    return qe.EdgeConfig(vectors=qe.EdgeVectorParams(size=size, distance=qe.Distance.Cosine))


PROVOCATIONS = {
    wrong_vector_size: VectorDimensionError,
    load_with_another_size: VectorDimensionError,
    load_with_other_vector_names: CollectionLayoutError,
    load_while_open: VectorStoreLockedError,
    use_after_close: StoreClosedError,
    load_missing: CollectionNotFoundError,
    id_not_a_uuid: RetrievalError,
    payload_not_json: RetrievalError,
    create_over_data: RetrievalError,
}


@pytest.mark.parametrize(("provoke", "expected"), PROVOCATIONS.items(), ids=lambda f: f.__name__)
def test_each_engine_error_is_translated_from_the_original(shard_path, provoke, expected):
    with pytest.raises(expected) as raised, translate_edge_errors("docs"):
        provoke(shard_path)
    assert type(raised.value.__cause__) in (Exception, ValueError, TypeError)
    assert raised.value.collection == "docs"


def test_dimension_errors_from_the_engine_carry_both_sizes(shard_path):
    with pytest.raises(VectorDimensionError) as raised, translate_edge_errors("docs"):
        upsert_raw(new_shard(shard_path), UUID, [1.0, 0.0, 0.0], {})
    assert (raised.value.expected, raised.value.got) == (4, 3)


def test_our_bugs_are_not_disguised_as_engine_errors():
    with pytest.raises(AttributeError), translate_edge_errors("docs"):
        None.missing  # type: ignore[attr-defined]  # noqa: B018


def test_a_point_the_text_rescoring_lacks_still_comes_with_its_payload(tmp_path):
    """The title rescoring is asked without payloads (the text rescoring of the same union
    brings them); a point holding a title vector and no text vector, written by hand, is read
    by id so its hit is whole."""
    with EdgeVectorStore(tmp_path / "vectors") as store:
        store.ensure_collection("docs", DIM)
        store.upsert("docs", [point("whole", 0, axis(1))])
        title_only = point("titled", 0, axis(0), title_vector=axis(0))
        shard = store._require("docs").shard
        shard.update(qe.UpdateOperation.upsert_points(
            [qe.Point(title_only.id, {"title": axis(0)}, title_only.payload)]))
        hits = store.search("docs", axis(0), top_k=2)
    by_doc = {h.payload["doc_id"]: h for h in hits}
    assert set(by_doc) == {"whole", "titled"}
    assert by_doc["titled"].payload == title_only.payload
    assert by_doc["titled"].text_score is None and by_doc["titled"].title_score is not None
    assert by_doc["whole"].payload["text"] == "text 0 of whole (v1)"
