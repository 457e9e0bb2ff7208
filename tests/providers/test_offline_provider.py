from ragq import providers
from ragq.providers import ModelProvider, OfflineProvider
from ragq.schemas.flow import QuestionClass, SourceProfile, Strategy
from tests.providers.conftest import ev


def test_public_map_lists_the_interface_and_the_implementations():
    assert set(providers.__all__) == {"ModelProvider", "OfflineProvider", "OpenAIProvider"}
    assert all(getattr(providers, name) for name in providers.__all__)


def test_offline_provider_satisfies_the_interface(provider):
    assert isinstance(provider, OfflineProvider)
    role: ModelProvider = provider  # type-checks against the Protocol
    assert role.name == "offline"


def test_every_role_returns_its_contract_and_an_offline_usage(provider):
    evidence = [ev("walkman", "The Walkman is a portable audio player made by Sony Corporation "
                   "since 1979.", title="Walkman")]
    question = "Who founded the company that makes the Walkman?"
    calls = [
        provider.route(question),
        provider.plan(question, max_sub_queries=4),
        provider.check_sufficiency("the company that makes the Walkman", evidence),
        provider.rewrite("the company that makes the Walkman", evidence, attempt=1,
                         previous=["the company that makes the Walkman"]),
        provider.find("the company that makes the Walkman", evidence),
        provider.verify(question, evidence, findings=["Sony Corporation"]),
        provider.synthesize(question, evidence, strategy="chain", findings=["Sony Corporation"]),
    ]
    for _, usage in calls:
        assert usage.model == "offline"
        assert usage.prompt_tokens > 0 and usage.latency_ms >= 0
    decision, plan = calls[0][0], calls[1][0]
    assert decision.question_class is QuestionClass.MULTI_HOP
    assert plan.strategy is Strategy.CHAIN
    assert calls[4][0].text == "Sony Corporation"


def test_same_input_same_output(provider):
    question = "Which river is longer, the Danube or the Rhine?"
    assert provider.plan(question, max_sub_queries=4)[0] == provider.plan(
        question, max_sub_queries=4)[0]


def test_the_source_router_sends_a_query_where_the_description_fits(provider):
    sources = [SourceProfile(name="billing-policy", description="Plans, invoices and refunds."),
               SourceProfile(name="api-reference", description="Endpoints and rate limits.")]
    choice, usage = provider.route_sources("Can annual plans be refunded?", sources)
    assert choice.sources == ["billing-policy"]
    assert choice.scores["billing-policy"] > choice.scores["api-reference"]
    assert usage.model == "offline" and usage.prompt_tokens > 0
