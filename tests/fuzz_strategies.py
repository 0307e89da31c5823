"""Hypothesis strategies for hostile input: junk values and random mutations of objects."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

__all__ = ["FUZZ", "junk", "bad_time", "mutate", "paths_of"]

#: Bounded, reproducible runs so CI stays fast.
FUZZ = settings(
    max_examples=200,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def _nested(depth: int) -> Any:
    value: Any = "deep"
    for i in range(depth):
        value = {"n": value} if i % 2 else [value]
    return value


bad_time = st.sampled_from(
    [
        "",
        "yesterday",
        "2026-13-45T99:99:99Z",
        "2026-11-30",
        "2026-11-30T06:00:00+99:00",
        "0000-00-00T00:00:00Z",
        "9999-12-31T23:59:59Z",
        "1970-01-01T00:00:00Z",
        "2026-11-30T06:00:00.123456789123Z",
        "\u0662\u0660\u0662\u0666-11-30T06:00:00Z",  # Arabic-Indic digits
        "2026-11-31T01:00:00Z",
        "-2026-11-30T01:00:00Z",
    ]
)

bad_quantity = st.sampled_from(
    ["-5Gi", "0", "-1", "1e309", "NaN", "Infinity", "5Gib", "", "99999999999999999999Ei", "１０Gi"]
)

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=40),
    st.sampled_from(["\u202eRTL\u202c", "<script>x</script>", "\x00\x1b[31m", "𝕏" * 8, "é" * 30]),
    st.integers(min_value=3, max_value=6).map(lambda k: "A" * 10**k),
    bad_time,
    bad_quantity,
)

junk: st.SearchStrategy[Any] = st.one_of(
    scalars,
    st.lists(scalars, max_size=4),
    st.dictionaries(st.text(max_size=8), scalars, max_size=4),
    st.integers(min_value=1, max_value=400).map(_nested),
)


def paths_of(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path (tuple of keys/indexes) to a node inside ``value``, the root excluded."""
    out: list[tuple[Any, ...]] = []
    if isinstance(value, dict):
        for key, item in value.items():
            out.append(prefix + (key,))
            out.extend(paths_of(item, prefix + (key,)))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            out.append(prefix + (i,))
            out.extend(paths_of(item, prefix + (i,)))
    return out


def mutate(obj: Any, path: tuple[Any, ...], op: str, value: Any) -> None:
    """Apply one mutation in place: ``replace`` the node, ``delete`` it, or ``add`` a sibling key."""
    parent = obj
    for key in path[:-1]:
        parent = parent[key]
    last = path[-1]
    if op == "replace":
        parent[last] = value
    elif op == "delete":
        del parent[last]
    elif isinstance(parent, dict):
        parent[f"{last}-extra"] = value
    else:
        parent.append(value)
