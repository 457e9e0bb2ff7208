"""The adapter packages name every adapter in their public map, yet importing a package loads no
vendor library: a process pays only for the adapters it uses (an offline worker never imports
``openai``, the CLI never loads onnxruntime or a Qdrant client)."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys

import pytest

LAZY = {  # package -> {exported adapter: the module that defines it}
    "ragq.providers": {"OpenAIProvider": "ragq.providers.openai.provider"},
    "ragq.embedding": {"MiniLmEmbedder": "ragq.embedding.minilm"},
    "ragq.vectorstore": {"EdgeVectorStore": "ragq.vectorstore.edge",
                         "QdrantServerStore": "ragq.vectorstore.server"},
}
VENDORS = ("openai", "onnxruntime", "tokenizers", "qdrant_client", "qdrant_edge")


def test_importing_the_packages_loads_no_vendor_library():
    code = (f"import sys\nimport {', '.join(LAZY)}\n"
            f"print(__import__('json').dumps([m for m in {VENDORS!r} if m in sys.modules]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=120)
    assert json.loads(out.stdout) == []


@pytest.mark.parametrize("package", sorted(LAZY))
def test_each_lazy_adapter_resolves_to_its_class_and_is_in_the_public_map(package):
    module = importlib.import_module(package)
    for name, home in LAZY[package].items():
        assert name in module.__all__
        assert getattr(module, name) is getattr(importlib.import_module(home), name)
    with pytest.raises(AttributeError, match=f"module '{package}' has no attribute 'Nope'"):
        module.Nope  # noqa: B018
