"""The snapshot a step's next decision starts from when the step's own writes are all it needs
to know about: no read of the whole job again.

Within one step the work's answer is decided on the job as the step's writes left it. Most of
those writes change little a decision reads: a status and charges (read back from the ledger
with the budget, see :meth:`ragq.ledger.ports.FlowLedger.refresh`), a model call's rows (no
part of a snapshot) and the text a sub-query searches (carried here). Reading the whole job
again after each of them was about a sixth of an I/O worker's CPU. Anything else the step wrote
(a plan, evidence, a verdict ...) is read back whole.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from ragq.orchestration.flow.actions import (
    LEDGER_WRITES,
    Action,
    Charge,
    RecordModelCall,
    SetQueryText,
    SetStatus,
)
from ragq.orchestration.flow.state import JobState

#: Writes whose effect on the next snapshot is known without reading the job again.
CARRIED_WRITES: tuple[type[Action], ...] = (SetStatus, Charge, RecordModelCall, SetQueryText)


def carry_over(state: JobState, actions: Sequence[Action]) -> JobState | None:
    """``state`` with ``actions``' writes carried over (status and budget still to be read
    back), or None when one of them is not carried and the job must be read again whole."""
    writes = [a for a in actions if isinstance(a, LEDGER_WRITES)]
    if not all(isinstance(a, CARRIED_WRITES) for a in writes):
        return None
    texts = {a.sub_query_id: a.text for a in writes if isinstance(a, SetQueryText)}
    if not texts:
        return state
    return replace(state, sub_queries=tuple(
        replace(sq, final_text=texts[sq.id]) if sq.id in texts else sq
        for sq in state.sub_queries))
