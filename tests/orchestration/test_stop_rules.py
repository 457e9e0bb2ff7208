from ragq.orchestration.stop_rules import StopReason, VerifyRound, decide_stop


def r(sufficient=False, confidence=0.0, new=3):
    return VerifyRound(sufficient, confidence, new)


def test_first_round_may_run():
    decision = decide_stop([])
    assert not decision.stop and decision.reason is None


def test_sufficient_with_enough_confidence_stops():
    assert decide_stop([r(True, 0.8)]).reason is StopReason.SUFFICIENT


def test_sufficient_below_min_confidence_continues():
    assert not decide_stop([r(True, 0.6)]).stop
    assert decide_stop([r(True, 0.6)], min_confidence=0.5).reason is StopReason.SUFFICIENT


def test_max_rounds_stop():
    history = [r(), r(), r()]
    assert decide_stop(history).reason is StopReason.MAX_ITERATIONS
    assert not decide_stop(history, max_rounds=4).stop


def test_explicit_round_number_wins_over_history_length():
    assert decide_stop([r()], round_number=3).reason is StopReason.MAX_ITERATIONS


def test_two_rounds_without_new_evidence_stop():
    assert decide_stop([r(new=0), r(new=0)], max_rounds=5).reason is StopReason.NO_NEW_EVIDENCE
    assert not decide_stop([r(new=0), r(new=1)], max_rounds=5).stop
    assert not decide_stop([r(new=0)], max_rounds=5).stop


def test_budget_stops_when_nothing_else_does():
    decision = decide_stop([r()], budget_allows_more=False)
    assert decision.stop and decision.reason is StopReason.BUDGET


def test_sufficient_outranks_budget():
    decision = decide_stop([r(True, 0.9)], budget_allows_more=False)
    assert decision.reason is StopReason.SUFFICIENT
