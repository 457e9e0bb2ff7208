"""The offline model provider: deterministic, network-free, extractive.

One module per role (router, planner, sufficiency, rewriter, finder, verifier, synthesizer),
shared English heuristics in ``lexicon`` and ``structure``; :class:`OfflineProvider` wires them.
"""

from ragq.providers.offline.provider import OfflineProvider

__all__ = ["OfflineProvider"]
