"""What a source reports while it reads, and a silent default.

The cluster source calls these hooks; the CLI shows them with rich (see
:mod:`auditor.cli.cluster`). Counts are objects read so far for the kind.
"""

from __future__ import annotations

from typing import Protocol

from auditor.sources.base import KindState

__all__ = ["CollectProgress", "NullProgress"]


class CollectProgress(Protocol):
    """Receives progress while a source reads ``total`` kinds."""

    def start(self, total: int) -> None:
        """Reading begins; ``total`` kinds will be read."""

    def page_read(self, kind: str, items: int) -> None:
        """A page of ``kind`` arrived; ``items`` objects of it read so far."""

    def kind_done(self, kind: str, state: KindState) -> None:
        """``kind`` is finished with ``state``."""

    def finish(self) -> None:
        """Reading is over."""


class NullProgress:
    """Progress that shows nothing."""

    def start(self, total: int) -> None:
        """Do nothing."""

    def page_read(self, kind: str, items: int) -> None:
        """Do nothing."""

    def kind_done(self, kind: str, state: KindState) -> None:
        """Do nothing."""

    def finish(self) -> None:
        """Do nothing."""
