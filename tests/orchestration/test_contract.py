"""The evidence contract: a job never stops as sufficient with a required key missing,
under-sourced, uncited, below its authority tier or contradicted, and a met contract is met
whatever else the ledger holds."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ragq.orchestration.contract import (
    ContractCheck,
    EvidenceContract,
    KeyState,
    Requirement,
    check_contract,
)
from ragq.schemas.flow import Evidence

KEYS = ["0: who makes the lens", "1: where is {0} based", "2: the fee of the card"]

evidence = st.builds(
    lambda doc, chunk, tier: Evidence(chunk_id=chunk, doc_id=doc, text="t", score=0.5,
                                      authority_tier=tier),
    st.sampled_from(["d1", "d2", "d3", " ", ""]), st.sampled_from(["c1", "c2", ""]),
    st.integers(1, 3))
requirements = st.builds(Requirement, st.sampled_from(KEYS), st.integers(1, 3), st.booleans(),
                         st.one_of(st.none(), st.integers(1, 3)))
contracts = st.lists(requirements, min_size=1, max_size=3, unique_by=lambda r: r.key).map(
    lambda rs: EvidenceContract(tuple(rs)))
key_states = st.dictionaries(st.sampled_from(KEYS), st.builds(
    KeyState, st.booleans(), st.lists(evidence, max_size=5).map(tuple)))


def _usable_sources(r: Requirement, state: KeyState) -> int:
    return len({e.doc_id for e in state.evidence
                if (not r.cited or (e.doc_id.strip() and e.chunk_id.strip()))
                and (r.max_tier is None or e.authority_tier <= r.max_tier)})


@given(contracts, key_states, st.sets(st.sampled_from(KEYS)))
def test_a_met_contract_has_every_key_answered_sourced_cited_and_uncontradicted(
        contract, keys, contradicted):
    check = check_contract(contract, keys, contradicted)
    if check.met:
        for r in contract.requirements:
            state = keys[r.key]  # a missing key is never met
            assert state.sufficient and r.key not in contradicted
            assert _usable_sources(r, state) >= r.min_sources
    else:
        assert check.missing and set(check.missing) <= {r.key for r in contract.requirements}


@given(contracts, key_states)
def test_each_missing_key_is_named_and_nothing_else(contract, keys):
    check = check_contract(contract, keys)
    for r in contract.requirements:
        state = keys.get(r.key)
        ok = state is not None and state.sufficient and \
            _usable_sources(r, state) >= r.min_sources
        assert (r.key in check.missing) is not ok


@given(contracts)
def test_a_contract_met_with_good_evidence_stays_met_when_more_evidence_arrives(contract):
    good = tuple(Evidence(chunk_id=f"c{i}", doc_id=f"d{i}", text="t", score=0.9,
                          authority_tier=1) for i in range(3))
    keys = {r.key: KeyState(True, good) for r in contract.requirements}
    assert check_contract(contract, keys).met
    more = {k: KeyState(True, (*v.evidence, Evidence(chunk_id="", doc_id="", text="x",
                                                     score=0.1, authority_tier=3)))
            for k, v in keys.items()}
    assert check_contract(contract, more).met


def test_an_empty_contract_is_never_met_and_a_contradiction_always_unmeets():
    assert check_contract(EvidenceContract(()), {}) == ContractCheck(
        False, (), "the contract requires nothing")
    contract = EvidenceContract((Requirement(KEYS[2]),))
    fee = {KEYS[2]: KeyState(True, (Evidence(chunk_id="c", doc_id="d", text="$5", score=1),))}
    assert check_contract(contract, fee).met
    check = check_contract(contract, fee, contradicted={KEYS[2]})
    assert not check.met and "contradicted" in check.reason
