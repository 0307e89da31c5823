"""Objects a one-shot command keeps until its process ends, so the process ends without
freeing them one by one.

An audit of 10,000 VMs holds millions of objects: the parsed cluster (about 150,000 slim
objects), its index and the report. Freeing them by reference counting when the function
that made them returns takes seconds (the parsed cluster alone about 0.6 s) and changes
nothing once the reports are written.

Two switches, both needed before anything is kept: the console script
(:func:`auditor.cli.entry`) says the process ends when its command does
(:func:`ends_with_command`), and it then ends with :func:`os._exit`; a one-shot command that
audits (``auditor run``) says its objects may stay (:func:`keep_from_now`). A long-lived
command (``auditor serve``, whose scheduled audits run in its own process) never says so, and
neither do tests or library use: there :func:`keep_until_exit` keeps nothing, so each
audit's objects are freed as soon as they are dropped.
"""

from __future__ import annotations

from typing import Any

__all__ = ["ends_with_command", "keep_from_now", "keep_until_exit", "kept"]

_ENDS = False
_KEEPING = False
_KEPT: list[Any] = []


def ends_with_command() -> None:
    """The console script's switch: this process ends when its command does."""
    global _ENDS
    _ENDS = True


def keep_from_now() -> None:
    """A one-shot command's switch: keep what :func:`keep_until_exit` is given from now on,
    when this process ends with the command (:func:`ends_with_command`); otherwise nothing."""
    global _KEEPING
    _KEEPING = _ENDS


def keep_until_exit(*objects: Any) -> None:
    """Keep ``objects`` alive until the process ends, once both switches are on; otherwise
    do nothing."""
    if _KEEPING:
        _KEPT.extend(objects)


def kept() -> bool:
    """Whether anything is being kept (the process must then end without teardown)."""
    return bool(_KEPT)
