"""The evidence contract: what a job needs before it may stop as sufficient.

A model's confidence is a tone, not a fact about the ledger. The contract states the facts the
plan needs, one requirement per planned sub-query (its *key*), and what each must rest on: how
many distinct source documents, whether every one must be citable (a chunk id and a document
id the answer can point to), and, for policy-like facts, the authority tier the sources must
reach. Whether it is met is a pure function of the sub-queries' checks and evidence, so the
same ledger always gives the same answer, and a job that meets it stops without asking a
verifier. A requirement whose evidence is contradicted (two sources giving one subject
different values) is not met, whatever else holds.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from ragq.schemas.flow import Evidence


@dataclass(frozen=True)
class Requirement:
    """One fact the plan needs: the sub-query ``key`` (its text) must be answered sufficiently
    from at least ``min_sources`` distinct documents, each citable when ``cited``, and of
    authority tier ``max_tier`` or better (1 is the most authoritative) when set."""

    key: str
    min_sources: int = 1
    cited: bool = True
    max_tier: int | None = None


@dataclass(frozen=True)
class EvidenceContract:
    """The requirements a job must meet to stop as sufficient."""

    requirements: tuple[Requirement, ...]

    def describe(self) -> str:
        """One line for the ledger and ``ragq ledger job``."""
        return "; ".join(
            f"{r.key!r}: >= {r.min_sources} source{'s' if r.min_sources != 1 else ''}"
            + (", cited" if r.cited else "")
            + (f", tier <= {r.max_tier}" if r.max_tier is not None else "")
            for r in self.requirements)


@dataclass(frozen=True)
class KeyState:
    """What the ledger holds for one key: whether its check was sufficient, and its evidence."""

    sufficient: bool
    evidence: Sequence[Evidence] = ()


@dataclass(frozen=True)
class ContractCheck:
    """The contract against the ledger: met, or the keys that are not and why."""

    met: bool
    missing: tuple[str, ...]
    reason: str


def unmet_because(requirement: Requirement, state: KeyState | None, contradicted: bool
                  ) -> str | None:
    """Why ``requirement`` is not met (None when it is)."""
    if state is None or not state.sufficient:
        return "not answered"
    if contradicted:
        return "contradicted"
    usable = [e for e in state.evidence
              if (not requirement.cited or (e.chunk_id.strip() and e.doc_id.strip()))
              and (requirement.max_tier is None or e.authority_tier <= requirement.max_tier)]
    sources = len({e.doc_id for e in usable})
    if sources < requirement.min_sources:
        what = "cited " if requirement.cited else ""
        tier = f" of tier <= {requirement.max_tier}" if requirement.max_tier is not None else ""
        return f"{sources} {what}source(s){tier}, {requirement.min_sources} needed"
    return None


def check_contract(contract: EvidenceContract, keys: Mapping[str, KeyState],
                   contradicted: Collection[str] = ()) -> ContractCheck:
    """Whether every requirement of ``contract`` is met by ``keys`` (a key absent is not
    answered); ``contradicted`` names keys whose evidence disagrees. An empty contract is
    never met: with nothing required, nothing says the job is done."""
    if not contract.requirements:
        return ContractCheck(False, (), "the contract requires nothing")
    why = {r.key: unmet_because(r, keys.get(r.key), r.key in contradicted)
           for r in contract.requirements}
    missing = tuple(key for key, reason in why.items() if reason is not None)
    if not missing:
        return ContractCheck(True, (), f"evidence contract met: {len(why)} key(s)")
    return ContractCheck(False, missing, "evidence contract not met: " + "; ".join(
        f"{key!r} {why[key]}" for key in missing))
