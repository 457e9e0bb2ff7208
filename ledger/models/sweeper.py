"""The sweeper's lease: which replica sweeps this round, and what the sweeps have done."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from ragq.ledger.models.base import Base


class SweeperLeaseRow(Base):
    """One lease per sweep (``name``): the replica holding it (``holder``) sweeps until
    ``expires_at``; the others skip their rounds. Its counters feed the metrics an operator
    watches (a sweeper that stopped running, jobs it resumed)."""

    __tablename__ = "sweeper_leases"

    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    holder: Mapped[str] = mapped_column(String(256))
    expires_at: Mapped[datetime]
    last_round_at: Mapped[datetime | None]
    rounds: Mapped[int] = mapped_column(Integer, default=0)
    resumed_jobs: Mapped[int] = mapped_column(Integer, default=0)
    joined_layers: Mapped[int] = mapped_column(Integer, default=0)
    started_jobs: Mapped[int] = mapped_column(Integer, default=0)
