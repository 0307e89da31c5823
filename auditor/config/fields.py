"""Name the field of a problem a pydantic model validator finds across fields.

A ``@model_validator`` sees the whole model, so pydantic reports what it raises at the
model's own location: ``<root>`` for the configuration file, ``publish`` for its section
(review lo31: a publishing schedule without ``json`` and a bad ``publish.endpoint_url`` were
both shown there). A validator raises :class:`FieldProblems` instead, each problem with the
dotted path of the field to change (relative to the model); :func:`error_problems` turns a
pydantic error into ``(dotted.path, message)`` pairs, expanding it.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic_core import ErrorDetails

__all__ = ["FieldProblems", "error_problems"]


class FieldProblems(ValueError):
    """Problems found across fields, each ``(field path relative to the model, message)``."""

    def __init__(self, problems: Sequence[tuple[str, str]]) -> None:
        self.problems = list(problems)
        super().__init__("; ".join(f"{field}: {message}" for field, message in self.problems))


def error_problems(err: ErrorDetails, message: str) -> list[tuple[str, str]]:
    """``(dotted.path, message)`` of one pydantic error: its location, with each field of a
    :class:`FieldProblems` it carries appended (then with that problem's own message);
    ``message`` is the text to show when it carries none. An empty path means the model
    itself."""
    where = ".".join(str(p) for p in err["loc"])
    raised = (err.get("ctx") or {}).get("error")
    if isinstance(raised, FieldProblems):
        return [(f"{where}.{field}" if where else field, text) for field, text in raised.problems]
    return [(where, message)]
