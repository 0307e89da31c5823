"""``at_after_input``'s timestamp signal stops at the first timestamp that decides it
(:func:`auditor.sources.freshness.stamped_after`), with the same answer as the full walk."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from auditor.sources.base import ClusterData, SourceInfo
from auditor.sources.freshness import QUIET_MARGIN, newest_timestamp, stamped_after


def _obj(name: str, meta: dict[str, Any], status: dict[str, Any] | None = None) -> dict[str, Any]:
    o: dict[str, Any] = {"metadata": {"name": name, **meta}}
    if status is not None:
        o["status"] = status
    return o


def _data() -> ClusterData:
    return ClusterData(
        info=SourceInfo(type="directory", location="/nowhere"),
        objects={
            "VirtualMachine": [
                _obj("a", {"creationTimestamp": "2026-01-01T00:00:00Z"}),
                _obj("b", {"creationTimestamp": "not a time"}),
                _obj("c", {"creationTimestamp": 5}),
            ],
            "Backup": [
                _obj(
                    "daily",
                    {"creationTimestamp": "2026-03-01T00:00:00Z"},
                    {"completionTimestamp": "2026-03-01T01:00:00+02:00"},
                ),
            ],
            "BackupStorageLocation": [
                _obj(
                    "default",
                    {"creationTimestamp": "2025-06-01T00:00:00Z"},
                    {
                        "lastValidationTime": "2026-02-01T00:00:00Z",
                        "conditions": [None, {"lastTransitionTime": "2026-03-02T00:00:00Z"}],
                    },
                ),
            ],
        },
    )


def test_the_newest_is_a_condition_read_past_unreadable_values() -> None:
    assert newest_timestamp(_data()) == datetime(2026, 3, 2, tzinfo=UTC)


@pytest.mark.parametrize(
    ("when", "after"),
    [
        (datetime(2026, 3, 1, 23, 59, 59, tzinfo=UTC), True),
        (datetime(2026, 3, 2, tzinfo=UTC), False),  # strictly after
        (datetime(2025, 1, 1, tzinfo=UTC), True),
        (datetime(2027, 1, 1, tzinfo=UTC), False),
    ],
)
def test_stamped_after_agrees_with_the_newest(when: datetime, after: bool) -> None:
    data = _data()
    assert stamped_after(data, when) is after
    newest = newest_timestamp(data)
    assert newest is not None and (newest > when) is after


def test_stamped_after_stops_at_the_first_deciding_timestamp() -> None:
    """A running cluster's BackupStorageLocation decides it: the VMs behind it are never read
    (an object whose ``get`` raises would end the walk with an error)."""

    class Untouchable(dict[str, Any]):
        def get(self, *_: object, **__: object) -> Any:
            raise AssertionError("read past the deciding timestamp")

    data = _data()
    data.objects["VirtualMachine"].append(Untouchable())
    at = datetime(2026, 3, 5, tzinfo=UTC)
    assert stamped_after(data, at - QUIET_MARGIN)
    with pytest.raises(AssertionError, match="read past"):
        stamped_after(data, at + timedelta(days=365))


def test_nothing_stamped_is_never_after() -> None:
    empty = ClusterData(info=SourceInfo(type="directory", location="/nowhere"), objects={})
    assert not stamped_after(empty, datetime(1970, 1, 1, tzinfo=UTC))
    assert newest_timestamp(empty) is None
