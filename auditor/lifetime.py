"""Objects a short-lived command keeps until its process ends, so the process ends without
freeing them one by one.

An audit of 10,000 VMs holds millions of objects: the parsed cluster (about 150,000 slim
objects), its index and the report. Freeing them by reference counting when the function
that made them returns takes seconds (the parsed cluster alone about 0.6 s) and changes
nothing once the reports are written. The console script (:func:`auditor.cli.entry`) turns
keeping on and ends the process with :func:`os._exit` once the command is done; anywhere
else (the scheduler service, tests, library use) :func:`keep_until_exit` keeps nothing, so a
long-lived process frees each audit's objects as soon as they are dropped.
"""

from __future__ import annotations

from typing import Any

__all__ = ["keep_until_exit", "keep_from_now", "kept"]

_KEEPING = False
_KEPT: list[Any] = []


def keep_from_now() -> None:
    """Keep from now on what :func:`keep_until_exit` is given (the console script's switch)."""
    global _KEEPING
    _KEEPING = True


def keep_until_exit(*objects: Any) -> None:
    """Keep ``objects`` alive until the process ends, once :func:`keep_from_now` was called;
    otherwise do nothing."""
    if _KEEPING:
        _KEPT.extend(objects)


def kept() -> bool:
    """Whether anything is being kept (the process must then end without teardown)."""
    return bool(_KEPT)
