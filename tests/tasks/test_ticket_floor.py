"""The ticket's floor: the whole ticket, searched in windows, always takes part in
the context, so what the asks' own searches miss can still reach the answer."""

from __future__ import annotations

from pathlib import Path

from ragq.ledger.memory import MemoryLedger
from ragq.orchestration.windows import TICKET_WINDOW
from ragq.schemas.document import Document
from tests.tasks.inprocess import indexed

TOPICS = {
    "plans": "Plans. The Starter plan includes three seats. The Team plan includes twenty seats "
             "and shared folders. Upgrades take effect at once and are prorated.",
    "invoices": "Invoices. Invoices are issued on the first day of each month and can be "
                "downloaded as PDF from the billing page by an account owner.",
    "sso": "Single sign-on. SAML single sign-on is available on the Team plan. Configure the "
           "identity provider metadata URL in the security settings.",
    "mobile": "Mobile app. The mobile app supports offline mode for documents marked as "
              "available offline. Sync resumes when the device is online again.",
    "export-quota": "Export errors. Error E-4410 means the workspace export quota is "
                    "exhausted: at most fifty exports run per day. The quota resets at midnight "
                    "UTC; an owner can raise it in Settings, Exports.",
}

# Pages that answer the asks' words better than the export page does, so the asks' own searches
# are filled with them.
NEAR_ASKS = {
    f"{kind}-{n}": f"{kind.title()} {n}. Notes on the deepest lunar crater and the colour of a "
                   f"team mascot, part {n}: {kind} guidance for studios and teams."
    for kind in ("crater", "mascot", "colour") for n in range(4)
}

FILLER = ("We are a small design studio of nine people and we have used the product for about "
          "two years across three offices, mostly for sharing drafts with clients and keeping "
          "our project archive in one place. ") * 6
TICKET = (
    "Hello team,\n\n" + FILLER + "\n\nCould you tell me which lunar crater is the deepest one?"
    "\nAlso, what colour should our team mascot be?\n\n"
    "Here is what the export screen printed last night:\n\n"
    "    export failed: E-4410 workspace export quota exhausted (51 of 50 today)\n\n"
    "Thanks,\nMina"
)


def test_a_ticket_whose_asks_all_miss_still_gets_the_whole_ticket_evidence(tmp_path: Path):
    pages = {**TOPICS, **NEAR_ASKS}
    docs = [Document(id=k, text=v, title=k) for k, v in pages.items()]
    ledger = MemoryLedger()
    with indexed(docs, tmp_path) as kb:
        result = kb.run(TICKET, ledger=ledger)
    job = next(iter(ledger.jobs.values()))
    windows = {s.id for s in job.sub_queries.values() if s.reason == TICKET_WINDOW}
    asks_found = {e.item.doc_id for e in job.evidence if e.sub_query_id not in windows}
    floor_found = {e.item.doc_id for e in job.evidence if e.sub_query_id in windows}
    # The ticket is longer than one window: the floor searched it in several.
    assert len(windows) >= 2
    # The asks (a crater, a mascot) find nothing about the export error; the floor does,
    # through the pasted line the reader set aside as noise, and the answer's context has it.
    assert "export-quota" not in asks_found
    assert "export-quota" in floor_found
    assert "export-quota" in result["context_doc_ids"]
