"""The messages of each role: a system prompt saying the job and the rules, a user message with
the inputs. Evidence is shown as ``[chunk_id=… doc_id=…] title`` headed blocks, so the model
can cite chunk ids exactly as they are.

Every system prompt opens with ``ragq role: <role>``: it names the role for whoever reads a
request log (and lets a test server answer by role without parsing the schema).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ragq.schemas.flow import Evidence, ModelRole, SourceProfile
from ragq.schemas.metadata import MetadataField

Messages = list[dict[str, str]]

_COMMON = ("Answer with one JSON object that matches the response schema, nothing else. "
           "Use only the information given; never invent facts, ids or sources.")

SYSTEM: dict[ModelRole, str] = {
    ModelRole.TICKET_READER: (
        "Read a support ticket. asks: every question or request it contains that the knowledge "
        "base could answer, each rewritten to stand on its own (resolve 'it', 'this' from the "
        "ticket), in the ticket's order, without lead-ins like 'First,'; a reason each. Not "
        "asks: greetings, thanks, sign-offs, offers to share logs, requests to call or reply. "
        "context: one or two sentences on who writes and their setup. noise: the lines you set "
        "aside (logs, configuration, signature), verbatim."),
    ModelRole.ROUTER: (
        "Classify a support question by how much retrieval it needs. question_class: "
        "simple_fact (one fact, one lookup), procedural (how to do something), multi_hop "
        "(needs a fact to find another fact, or compares several things), investigative "
        "(open-ended, needs many sources). confidence is between 0 and 1."),
    ModelRole.SOURCE_ROUTER: (
        "Choose which sources (collections) to search for a query, from their descriptions. "
        "sources: the name of the best fitting source, and of any other that may hold the "
        "answer too, best first, only names from the list. scores: each listed source with a "
        "fit in [0, 1]. past_hits counts how often a source's passages answered before."),
    ModelRole.PLANNER: (
        "Decompose the question into at most {max_sub_queries} atomic search queries. A "
        "sub-query that needs the answer of an earlier one lists that one's 0-based index in "
        "depends_on and writes {{i}} where that answer goes (e.g. 'Who founded {{0}}?'). "
        "strategy: single (one query answers it), chain (each hop feeds the next), compare "
        "(parallel facts about several entities), aggregate (parallel parts of a compound "
        "question). A simple question gets exactly one sub-query: the question itself. The "
        "sender's context, when given, helps read the question; never search for it."),
    ModelRole.SUFFICIENCY: (
        "Decide whether the evidence answers the query. sufficient is true only if a reader "
        "could answer from the evidence alone; score is your confidence in [0, 1]; "
        "missing_terms lists what the evidence lacks. finding: in a few words, what the "
        "evidence says in answer to the query, the bare fact (a name, a number, a date) fit to "
        "be substituted into a later query; its doc_ids; up to 2 other candidates the evidence "
        "names, most likely first, in alternatives; text empty if the evidence does not say. "
        "rewrite: when not sufficient, one different search query for the same need, from "
        "another angle (other words, the missing terms, names the evidence mentions), differing "
        "from every query already tried; empty when sufficient."),
    ModelRole.REWRITER: (
        "The evidence did not answer the query. Write one different search query for the same "
        "need, from another angle (other words, the missing terms, names the evidence "
        "mentions). It must differ from every query already tried."),
    ModelRole.FINDER: (
        "State in a few words what the evidence says in answer to the query: the bare fact "
        "(a name, a number, a date), fit to be substituted into a later query. doc_ids lists "
        "the documents it comes from. If the evidence does not say, text is empty. When the "
        "evidence names other candidates that could be the answer, list up to 2 of them, most "
        "likely first, in alternatives (a later query tries them if text finds nothing)."),
    ModelRole.VERIFIER: (
        "Judge whether the evidence, taken together, answers the whole question. confidence is "
        "in [0, 1]. If something is missing, say what in missing_info and give at most 3 "
        "follow_up_queries that would find it."),
    ModelRole.RERANKER: (
        "Rank the candidate passages by how much each helps answer the question (for a ticket, "
        "the ask it was found for). ranked lists the chunk_id of every useful passage, most "
        "useful first; leave out passages that do not help. Passages that together answer a "
        "question of several parts (each part, each hop) all count as useful."),
    ModelRole.SYNTHESIZER: (
        "Answer the question from the context only, concisely. Cite every chunk the answer rests "
        "on by its exact chunk_id, with a short verbatim quote. If sources disagree, say so in "
        "the answer, cite both, and list the disagreement in contradictions (each statement "
        "verbatim, with its chunk_id, doc_id and subject in the same order). Sources disagree "
        "only when they give different values for the same subject: subjects names the "
        "product, plan, policy or entity each statement is about, from its passage's title, "
        "headings and the sentence, in the same words when it is the same one. Different "
        "products' prices, different people's dates, and code samples, example payloads or "
        "logs are no contradiction. If the context does not answer the question, say so and "
        "set insufficient to true."),
}

TICKET_SYNTHESIS = (
    "The question is a support ticket's asks, numbered from 0. Answer each ask in turn, in "
    "answers (one item per ask, its index, in order), from the context only, citing the chunks "
    "each answer rests on. An ask the context does not answer gets insufficient true and says "
    "so; the others are still answered.")


def system(role: ModelRole, **fields: Any) -> str:
    """The system prompt of ``role`` (``fields`` fill its placeholders)."""
    return f"ragq role: {role.value}\n{SYSTEM[role].format(**fields)}\n{_COMMON}"


def evidence_block(evidence: Sequence[Evidence]) -> str:
    """The evidence as the model reads it; ``(none)`` when there is none."""
    if not evidence:
        return "(none)"
    return "\n\n".join(
        f"[chunk_id={e.chunk_id} doc_id={e.doc_id}] {e.title}".rstrip() + f"\n{e.text}"
        for e in evidence)


def _bullets(items: Sequence[str]) -> str:
    return "\n".join(f"- {i}" for i in items) if items else "(none)"


def messages(role: ModelRole, user: str, **fields: Any) -> Messages:
    return [{"role": "system", "content": system(role, **fields)},
            {"role": "user", "content": user}]


def read_ticket(text: str) -> Messages:
    return messages(ModelRole.TICKET_READER, f"Ticket:\n{text}")


def route(question: str) -> Messages:
    return messages(ModelRole.ROUTER, f"Question: {question}")


def route_sources(query: str, sources: Sequence[SourceProfile]) -> Messages:
    listed = "\n".join(f"- name={s.name} past_hits={s.hits}: {s.description or '(none)'}"
                       for s in sources)
    return messages(ModelRole.SOURCE_ROUTER, f"Query: {query}\n\nSources:\n{listed}")


def plan(question: str, max_sub_queries: int, context: str = "",
         fields: Sequence[MetadataField] = ()) -> Messages:
    sender = f"\n\nThe sender's context (not to search): {context}" if context else ""
    chat = messages(ModelRole.PLANNER, f"Question: {question}{sender}{_fields_block(fields)}",
                    max_sub_queries=max_sub_queries)
    if fields:
        chat[0]["content"] += f"\n{PLAN_FILTERS}"
    return chat


#: What a planner told the source's metadata fields may do with them.
PLAN_FILTERS = (
    "The documents carry the metadata fields listed with the question. When a sub-query "
    "names a constraint one of them expresses (a product, plan, region, type, a date or number "
    "bound), give it in that sub-query's `filters`: `field` one of the listed names, `op` one "
    "of eq, in, lt, lte, gt, gte, `values` the value(s) as strings (one for every op but "
    "in; for an enum field only its listed values). No constraint stated: no filter. A filter "
    "hides every page outside it, so never guess one.")

#: The most values of one field a planner is shown.
FIELD_VALUES_SHOWN = 40


def _fields_block(fields: Sequence[MetadataField]) -> str:
    if not fields:
        return ""
    lines = []
    for f in fields:
        values = ", ".join(f.values[:FIELD_VALUES_SHOWN]) if f.values else ""
        more = " ..." if len(f.values) > FIELD_VALUES_SHOWN else ""
        lines.append(f"- {f.name} ({f.type.value}){': ' + f.description if f.description else ''}"
                     f"{'; values: ' + values + more if values else ''}")
    return "\n\nMetadata fields:\n" + "\n".join(lines)


def sufficiency(sub_query: str, evidence: Sequence[Evidence],
                previous: Sequence[str] = ()) -> Messages:
    return messages(ModelRole.SUFFICIENCY,
                    f"Query: {sub_query}\n\nAlready tried:\n{_bullets(previous)}\n\n"
                    f"Evidence:\n{evidence_block(evidence)}")


def rewrite(sub_query: str, evidence: Sequence[Evidence], previous: Sequence[str]) -> Messages:
    return messages(ModelRole.REWRITER,
                    f"Query: {sub_query}\n\nAlready tried:\n{_bullets(previous)}\n\n"
                    f"Evidence:\n{evidence_block(evidence)}")


def find(sub_query: str, evidence: Sequence[Evidence]) -> Messages:
    return messages(ModelRole.FINDER,
                    f"Query: {sub_query}\n\nEvidence:\n{evidence_block(evidence)}")


def verify(question: str, evidence: Sequence[Evidence], findings: Sequence[str],
           missing: Sequence[str] = ()) -> Messages:
    unanswered = (f"Parts the searches did not answer (follow_up_queries should find these "
                  f"first):\n{_bullets(missing)}\n\n" if missing else "")
    return messages(ModelRole.VERIFIER,
                    f"Question: {question}\n\nFindings so far:\n{_bullets(findings)}\n\n"
                    f"{unanswered}Evidence:\n{evidence_block(evidence)}")


def synthesize(question: str, context: Sequence[Evidence], strategy: str,
               findings: Sequence[str], asks: Sequence[str] = (), *,
               chain_ends: Sequence[str] = ()) -> Messages:
    if asks:
        listed = "\n".join(f"{i}. {a}" for i, a in enumerate(asks))
        chat = messages(ModelRole.SYNTHESIZER,
                        f"Asks:\n{listed}\n\nContext:\n{evidence_block(context)}")
        chat[0]["content"] += f"\n{TICKET_SYNTHESIS}"
        return chat
    return messages(ModelRole.SYNTHESIZER,
                    f"Question: {question}\n\nHow the parts combine: {strategy}\n\n"
                    f"Findings of the sub-queries:\n{_bullets(findings)}\n\n"
                    + (f"What the question finally asks, hop by hop resolved:\n"
                       f"{_bullets(chain_ends)}\n\n" if chain_ends else "")
                    + f"Context:\n{evidence_block(context)}")


def rerank(question: str, candidates: Sequence[Evidence], asks: Sequence[str] = ()
           ) -> Messages:
    if asks:
        listed = "\n".join(f"{i}. {a}" for i, a in enumerate(asks))
        question = f"{question}\n\nAsks:\n{listed}"
    blocks = "\n\n".join(
        f"[chunk_id={e.chunk_id} doc_id={e.doc_id}"
        + (f" ask={e.ask_index}" if asks and e.ask_index is not None else "")
        + f"] {e.title}".rstrip() + f"\n{e.text}" for e in _distinct(candidates))
    return messages(ModelRole.RERANKER, f"Question: {question}\n\nCandidates:\n{blocks}")


def _distinct(evidence: Sequence[Evidence]) -> list[Evidence]:
    first: dict[str, Evidence] = {}
    for e in evidence:
        first.setdefault(e.chunk_id, e)
    return list(first.values())


def json_object_instructions(schema: dict[str, Any]) -> str:
    """Appended to the system prompt when the server cannot enforce the schema itself."""
    return ("Reply with a single JSON object (no prose, no code fence) valid against this JSON "
            f"schema:\n{json.dumps(schema, separators=(',', ':'))}")


def repair(problem: str) -> str:
    """The user turn of the one repair attempt after an unusable answer."""
    return (f"Your previous answer could not be used: {problem}\n"
            "Reply again with only the corrected JSON object, complete and valid against the "
            "schema. Keep it short.")
