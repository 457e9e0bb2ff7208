"""Which source(s) a sub-query searches: the offline choice (lexical fit to the description,
past hits as a tie-breaking prior), a model's choice kept to the offered sources, and the
decisions of the retrieve step for a job over several sources."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragq.orchestration.flow import (
    CallRole,
    Charge,
    FlowConfig,
    JobState,
    Probe,
    RecordSourceRoute,
    SubQueryState,
    decide,
)
from ragq.orchestration.flow.actions import SourceRouteRequest
from ragq.orchestration.flow.events import RetrieveDue, RoleAnswered
from ragq.orchestration.sources import (
    CLOSE_MARGIN,
    NO_FIT,
    PRIOR_WEIGHT,
    accept_choice,
    choose_sources,
    lexical_fit,
    score_sources,
)
from ragq.schemas.flow import SourceChoice, SourceProfile, Usage
from ragq.schemas.statuses import BudgetDimension, JobStatus

BILLING = SourceProfile(name="billing-policy",
                        description="Plans and pricing, invoices, refunds and payment methods.")
API = SourceProfile(name="api-reference",
                    description="Endpoints, request parameters, rate limits and error codes.")


def test_a_query_goes_to_the_source_whose_description_fits_it():
    refund = choose_sources("How long is the refund window of annual plans?", [BILLING, API])
    assert refund.sources == ["billing-policy"]
    rate = choose_sources("What is the rate limit of the search endpoint?", [BILLING, API])
    assert rate.sources == ["api-reference"]
    assert set(rate.scores) == {"billing-policy", "api-reference"}
    assert rate.scores["api-reference"] > rate.scores["billing-policy"]
    assert "api-reference" in rate.reason


def test_the_source_name_counts_as_a_description():
    bare = [SourceProfile(name="billing-policy"), SourceProfile(name="api-reference")]
    assert choose_sources("which billing policy applies?", bare).sources == ["billing-policy"]


def test_a_query_fitting_two_sources_alike_searches_both_best_first():
    both = choose_sources("refunds, invoices and rate limits", [BILLING, API])
    assert set(both.sources) == {"billing-policy", "api-reference"}
    scores = both.scores
    assert scores[both.sources[0]] >= scores[both.sources[1]]
    assert abs(scores["billing-policy"] - scores["api-reference"]) <= CLOSE_MARGIN


def test_a_query_no_description_fits_searches_every_source():
    choice = choose_sources("Who painted the ceiling?", [BILLING, API])
    assert set(choice.sources) == {"billing-policy", "api-reference"}
    assert choice.reason == NO_FIT


def test_past_hits_break_a_tie_but_never_beat_a_fit():
    a = SourceProfile(name="a", description="refunds", hits=90)
    b = SourceProfile(name="b", description="refunds", hits=10)
    tied = score_sources("refunds", [a, b])
    assert tied["a"] > tied["b"]
    assert choose_sources("refunds", [a, b]).sources[0] == "a"
    fits_b = SourceProfile(name="b", description="refunds invoices", hits=0)
    other = SourceProfile(name="a", description="refunds", hits=1000)
    assert choose_sources("refunds invoices", [other, fits_b]).sources == ["b"]


def test_no_sources_is_a_programming_error():
    with pytest.raises(ValueError, match="at least one source"):
        choose_sources("anything", [])


def test_a_model_choice_is_kept_to_the_offered_sources():
    kept = accept_choice(SourceChoice(sources=["api-reference", "elsewhere", "api-reference"],
                                      scores={"api-reference": 0.9, "elsewhere": 0.5},
                                      reason="endpoints"), "rate limit", [BILLING, API])
    assert kept.sources == ["api-reference"]
    assert kept.scores == {"api-reference": 0.9}
    assert "ignored unknown elsewhere" in kept.reason


def test_a_model_choice_naming_no_offered_source_falls_back_to_the_offline_one():
    fallback = accept_choice(SourceChoice(sources=["elsewhere"], reason="?"),
                             "What is the rate limit of the search endpoint?", [BILLING, API])
    assert fallback.sources == ["api-reference"]
    assert fallback.reason.startswith("the model chose no offered source (elsewhere)")


names = st.text(alphabet="abcdefgh-", min_size=1, max_size=8)
words = st.sampled_from(["refunds", "plans", "rate", "limits", "endpoint", "invoice", "the",
                         "keys", "regions", "what", "is"])
profiles = st.lists(st.builds(SourceProfile, name=names,
                              description=st.lists(words, max_size=6).map(" ".join),
                              hits=st.integers(0, 50)),
                    min_size=1, max_size=5, unique_by=lambda p: p.name)


@given(query=st.lists(words, max_size=8).map(" ".join), sources=profiles)
def test_the_offline_choice_is_a_non_empty_best_first_subset(query, sources):
    choice = choose_sources(query, sources)
    offered = [s.name for s in sources]
    assert choice.sources and set(choice.sources) <= set(offered)
    assert len(set(choice.sources)) == len(choice.sources)
    best = max(choice.scores.values())
    assert choice.scores[choice.sources[0]] == best
    fits = [lexical_fit(query, s) for s in sources]
    if max(fits) > 0:
        assert all(best - choice.scores[n] <= CLOSE_MARGIN for n in choice.sources)
    assert all(0 <= v <= 1 + PRIOR_WEIGHT for v in choice.scores.values())


# --- the retrieve step of a job over several sources -----------------------------------------


def _state(**overrides: object) -> JobState:
    sq = SubQueryState(id="sq1", round=0, index=0, text="What is the rate limit?")
    values: dict[str, object] = dict(
        job_id="job1", question="What is the rate limit?", collection="billing-policy",
        acl=("public",), status=JobStatus.RETRIEVING, config=FlowConfig(), route="full",
        sub_queries=(sq,), sources=(BILLING, API))
    return JobState(**(values | overrides))  # type: ignore[arg-type]


def test_an_unrouted_sub_query_asks_the_source_router_first():
    actions = decide(_state(), RetrieveDue(0, 0))
    call = actions[-1]
    assert isinstance(call, CallRole) and call.role == "source_router"
    assert isinstance(call.request, SourceRouteRequest)
    assert call.request.sources == (BILLING, API)
    assert any(isinstance(a, Charge) and a.key == "sources:sq1:pre" for a in actions)


def test_the_routers_answer_is_recorded_then_only_its_sources_are_searched():
    ask = decide(_state(), RetrieveDue(0, 0))[-1]
    assert isinstance(ask, CallRole)
    choice = SourceChoice(sources=["api-reference"], scores={"api-reference": 0.8}, reason="r")
    actions = decide(_state(), RoleAnswered(ask, choice, Usage(model="m"), "openai"))
    recorded = next(a for a in actions if isinstance(a, RecordSourceRoute))
    assert recorded.choice.sources == ["api-reference"] and recorded.provider == "openai"
    probe = actions[-1]
    assert isinstance(probe, Probe) and probe.cache == "api-reference"


def test_a_routed_sub_query_of_two_sources_skips_the_cache_and_pays_two_calls():
    sq = SubQueryState(id="sq1", round=0, index=0, text="What is the rate limit?",
                       sources=("api-reference", "billing-policy"))
    state = _state(sub_queries=(sq,))
    probe = decide(state, RetrieveDue(0, 0))[-1]
    assert isinstance(probe, Probe) and probe.cache is None
    from ragq.orchestration.flow.events import Probed

    actions = decide(state, Probed(probe.request, probe.query, [1.0, 0.0]))
    paid = next(a for a in actions if isinstance(a, Charge) and a.step == "retrieve")
    assert paid.amounts[BudgetDimension.RETRIEVAL_CALLS] == 2
    search = actions[-1]
    assert search.collections == ("api-reference", "billing-policy")  # type: ignore[attr-defined]


def test_a_job_of_one_collection_never_asks_the_source_router():
    state = _state(sources=())
    actions = decide(state, RetrieveDue(0, 0))
    assert not any(isinstance(a, CallRole) for a in actions)
    probe = actions[-1]
    assert isinstance(probe, Probe) and probe.cache == "billing-policy"


def test_a_redelivered_answer_searches_where_the_recorded_choice_sent_it():
    ask = decide(_state(), RetrieveDue(0, 0))[-1]
    assert isinstance(ask, CallRole)
    routed = SubQueryState(id="sq1", round=0, index=0, text="What is the rate limit?",
                           sources=("api-reference",))
    other = SourceChoice(sources=["billing-policy"], reason="a different answer this time")
    actions = decide(_state(sub_queries=(routed,)),
                     RoleAnswered(ask, other, Usage(model="m"), "openai"))
    probe = actions[-1]
    assert isinstance(probe, Probe) and probe.cache == "api-reference"
