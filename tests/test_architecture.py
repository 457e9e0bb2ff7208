"""The house rules, checked on the source: imports run one way, orchestration stays pure,
adapters stand apart, the ORM stays in the ledger, and everything lives under ``ragq``.

Every import counts, also those under ``TYPE_CHECKING`` and inside functions: a rule that only
holds at run time is a rule a refactor breaks without noticing.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ["schemas", "ragq", "orchestration", "ledger", "vectorstore", "embedding",
            "providers", "caches", "webhooks", "tasks", "workers", "ingestion", "submission",
            "evaluation", "api", "cli"]
ADAPTERS = {"ledger", "vectorstore", "embedding", "providers", "caches", "webhooks"}
FRONT_DOOR = {"ingestion", "submission", "evaluation", "api", "cli"}
# Lower layers never import higher ones; packages of one layer may import each other only
# where the rules below allow it.
LAYERS = [{"schemas"}, {"ragq"}, {"orchestration"}, ADAPTERS, {"tasks"}, {"workers"},
          FRONT_DOOR]
LEVEL = {package: n for n, layer in enumerate(LAYERS) for package in layer}


def _folder(package: str) -> Path:
    return ROOT / package


def _modules(package: str) -> Iterator[tuple[str, ast.Module]]:
    folder = _folder(package)
    files = folder.glob("*.py") if package == "ragq" else folder.rglob("*.py")
    for path in files:
        yield str(path.relative_to(ROOT)), ast.parse(path.read_text(), str(path))


def _imports(tree: ast.Module) -> Iterator[str]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module
            if node.module == "ragq":
                yield from (f"ragq.{alias.name}" for alias in node.names)


def _unit(name: str) -> str | None:
    """The package an imported name belongs to (``ragq`` for errors and settings)."""
    parts = name.split(".")
    if parts[0] != "ragq":
        return None
    if len(parts) > 1 and parts[1] in PACKAGES:
        return parts[1]
    return "ragq"


def _graph() -> dict[str, dict[str, set[str]]]:
    """package -> imported package -> the modules that import it."""
    graph: dict[str, dict[str, set[str]]] = {p: {} for p in PACKAGES}
    for package in PACKAGES:
        for module, tree in _modules(package):
            for name in _imports(tree):
                unit = _unit(name)
                if unit and unit != package:
                    graph[package].setdefault(unit, set()).add(f"{module} -> {name}")
    return graph


def test_schemas_import_nothing_of_ours():
    assert _graph()["schemas"] == {}


def test_orchestration_imports_only_schemas_the_errors_and_the_standard_library():
    allowed_ours = {"ragq.errors"}
    offenders = []
    for module, tree in _modules("orchestration"):
        for name in _imports(tree):
            top = name.split(".")[0]
            unit = _unit(name)
            if unit in ("orchestration", "schemas") or name in allowed_ours:
                continue
            if unit is None and (top in sys.stdlib_module_names or top == "pydantic"):
                continue
            offenders.append(f"{module} -> {name}")
    assert offenders == []


def test_no_adapter_imports_another():
    graph = _graph()
    offenders = {a: sorted(m for b in graph[a] if b in ADAPTERS for m in graph[a][b])
                 for a in ADAPTERS}
    assert {a: m for a, m in offenders.items() if m} == {}


def test_imports_run_down_the_layers():
    graph = _graph()
    upward = [module for package, deps in graph.items() for dep, modules in deps.items()
              if LEVEL[dep] > LEVEL[package] for module in modules]
    assert upward == []


def test_no_cycle_between_packages():
    graph = {p: set(deps) for p, deps in _graph().items()}
    visiting: set[str] = set()
    done: set[str] = set()

    def visit(package: str, path: list[str]) -> None:
        assert package not in visiting, " -> ".join([*path, package])
        if package in done:
            return
        visiting.add(package)
        for dep in graph[package]:
            visit(dep, [*path, package])
        visiting.discard(package)
        done.add(package)

    for package in PACKAGES:
        visit(package, [])


def test_the_orm_stays_in_the_ledger():
    """Outside the ledger, SQLAlchemy appears only as the types of what the ledger hands out
    (an engine, a session a front door borrows): no query is built anywhere else."""
    types_only = {"Engine", "Session"}
    offenders = []
    for package in set(PACKAGES) - {"ledger"}:
        for module, tree in _modules(package):
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names if a.name.split(".")[0] == "sqlalchemy"]
                    offenders += [f"{module}: import {n}" for n in names]
                elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] \
                        == "sqlalchemy":
                    offenders += [f"{module}: {node.module}.{a.name}" for a in node.names
                                  if a.name not in types_only]
                elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
                        "ragq.ledger.models"):
                    offenders.append(f"{module}: {node.module}")
    assert sorted(offenders) == []


def test_every_import_of_ours_names_the_ragq_namespace():
    """A bare ``import tasks`` works from a checkout and breaks once installed."""
    offenders = [f"{module} -> {name}" for package in PACKAGES
                 for module, tree in _modules(package) for name in _imports(tree)
                 if name.split(".")[0] in set(PACKAGES) - {"ragq"}]
    assert offenders == []


def test_the_code_cites_the_docs_not_a_spec_the_repository_lacks() -> None:
    """A reader of the clone cannot open the product spec, so a docstring that says "see SPEC
    C6" says nothing: it states the rule itself or links a page under docs/."""
    citing = [name for package in PACKAGES for name, _ in _modules(package)
              if "SPEC" in (ROOT / name).read_text().replace("SPECS", "").replace("SPECIAL", "")]
    assert citing == []
