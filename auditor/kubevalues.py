"""Parse the value formats Kubernetes objects use: timestamps, durations, quantities.

All times are timezone-aware UTC ``datetime``s. Every parser returns None for a
value it cannot read (the caller decides whether that is an ERROR), never a
guess.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from decimal import ROUND_CEILING, Decimal
from functools import lru_cache
from typing import Any

__all__ = [
    "parse_time",
    "parse_rfc3339",
    "format_time",
    "age_hours",
    "parse_duration",
    "parse_go_duration",
    "parse_quantity",
    "dig",
]

#: RFC 3339 section 5.6 date-time: seconds and a zone are required (the space separator its
#: note allows is how YAML writers print timestamps, and is kept)
_RFC3339 = re.compile(r"\d{4}-\d\d-\d\d[Tt ]\d\d:\d\d:\d\d(?:\.\d{1,9})?(?:[Zz]|[+-]\d\d:\d\d)")
_DURATION = re.compile(r"(\d+(?:\.\d+)?)(h|ms|m|s|us|µs|ns)")


def parse_rfc3339(value: Any) -> datetime | None:
    """:func:`parse_time` of a value an API server could have written: a ``datetime`` (as
    YAML hands over unquoted timestamps) or an RFC 3339 string with seconds and a zone.
    Kubernetes' ``metav1.Time`` accepts nothing else (k8s.io/apimachinery
    pkg/apis/meta/v1/time.go ``UnmarshalJSON``: ``time.Parse(time.RFC3339, ...)``), so
    ``2026-11-30T02:30:12`` (no zone: which zone is a guess), ``2026-11-30 02:30`` or
    ``20261130T023012Z`` are malformed even though Python's ``fromisoformat`` reads them.
    The validators use it; readers keep :func:`parse_time`.

    Go's zero time (``0001-01-01T00:00:00Z``, in any zone) is no time either: ``metav1.Time``
    writes it as ``null`` (pkg/apis/meta/v1/time.go ``MarshalJSON``: "Encode unset/nil
    objects as JSON's null"), so a copy holding it was edited; read as an instant it made a
    Backup start or expire 2,025 years ago, unnamed (bench.mutations time_edge, fz36)."""
    if isinstance(value, str) and _RFC3339.fullmatch(value.strip()) is None:
        return None
    parsed = parse_time(value)
    return None if parsed == _GO_ZERO_TIME else parsed


#: Go's ``time.Time{}``, which ``metav1.Time`` never writes as a text.
_GO_ZERO_TIME = datetime(1, 1, 1, tzinfo=UTC)


def parse_time(value: Any) -> datetime | None:
    """Parse an RFC 3339 string (a Kubernetes ``metav1.Time``) or a ``datetime``.

    YAML may hand over a ``datetime`` for unquoted timestamps; naive values are UTC. A
    number is no timestamp: the API server writes every ``metav1.Time`` as an RFC 3339
    string, and reading ``1764471600`` as nanoseconds since 1970 made a VM exist before its
    backups (red team, helper-15). Returns None for anything else or out-of-range values.
    """
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if not isinstance(value, str) or not value or len(value) > 64:
        return None
    text = value.strip().replace("z", "Z")
    if "T" not in text and " " not in text:
        return None  # a bare date is not a Kubernetes timestamp; midnight would be a guess
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    try:
        return parsed.astimezone(UTC)
    except OverflowError:
        # '0001-01-01T00:00:00+01:00' or '9999-12-31T23:59:59-01:00': no instant Python can
        # hold in UTC, so unreadable, as a malformed text is (red-team: it crashed the audit)
        return None


# An audit formats the same few thousand Backup and snapshot times again for every VM and disk
# that names them; equal instants (in any zone) hash alike and format alike.
@lru_cache(maxsize=65536)
def format_time(value: datetime | None) -> str | None:
    """Format as RFC 3339 UTC with a ``Z`` suffix, second precision (None stays None)."""
    if value is None:
        return None
    v = value.astimezone(UTC)
    # Not strftime: "%Y" drops the zero padding of years before 1000 on glibc.
    return f"{v.year:04d}-{v.month:02d}-{v.day:02d}T{v.hour:02d}:{v.minute:02d}:{v.second:02d}Z"


def age_hours(then: datetime | None, now: datetime) -> float | None:
    """Hours from ``then`` to ``now``, rounded to two decimals (negative if in the future)."""
    if then is None:
        return None
    return round((now - then).total_seconds() / 3600.0, 2)


#: The longest Go ``time.Duration`` (int64 nanoseconds), in seconds: ParseDuration refuses more.
_GO_MAX_DURATION_S = (2**63 - 1) / 1e9


def parse_duration(value: Any) -> timedelta | None:
    """Parse a Go duration such as Velero's ``ttl: 720h0m0s``; None if unreadable."""
    if not isinstance(value, str) or not value or len(value) > 64:
        return None
    pos, total = 0, 0.0
    scale = {"h": 3600, "m": 60, "s": 1, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}
    for match in _DURATION.finditer(value):
        if match.start() != pos:
            return None
        total += float(match.group(1)) * scale[match.group(2)]
        pos = match.end()
    if pos != len(value) or total > _GO_MAX_DURATION_S:
        return None  # Go's time.Duration is int64 nanoseconds: about 2562047 h at most
    return timedelta(seconds=total)


def parse_go_duration(value: Any) -> timedelta | None:
    """Parse a ``metav1.Duration`` as the API stores it: a string Go's ``time.ParseDuration``
    takes (``5m0s``, ``1.5h``), with an optional sign (``-1m``, a negative span) or ``0``
    alone; None if unreadable (another type, ``"1 minute"``, ``"60"``).

    Sources: apimachinery pkg/apis/meta/v1/duration.go ``Duration.UnmarshalJSON`` (a JSON
    string through ``time.ParseDuration``,
    https://github.com/kubernetes/apimachinery/blob/master/pkg/apis/meta/v1/duration.go), Go
    src/time/format.go ``ParseDuration`` (``[-+]?([0-9]*(\\.[0-9]*)?[a-z]+)+``, ``"0"``).
    """
    if not isinstance(value, str):
        return None
    sign = -1 if value[:1] == "-" else 1
    body = value[1:] if value[:1] in ("-", "+") else value
    if body == "0":
        return timedelta(0)
    span = parse_duration(body)
    return None if span is None else span * sign


def parse_quantity(value: Any) -> int | None:
    """Parse a resource quantity (``40Gi``, ``500M``, ``1e3``) to bytes; None if unreadable
    or negative.

    The grammar is Kubernetes' own (``kubernetes.utils.parse_quantity``); a fraction of a
    byte rounds up, as Kubernetes does for storage (``500m`` is 1 byte). The text must also
    match the API server's grammar (:data:`_GO_QUANTITY`): the Python client takes
    ``1E3Gi`` (an exponent and a suffix) and full-width digits (``１０Gi``), which
    ``resource.ParseQuantity`` refuses, so no stored object holds them (bench.mutations
    quantity_exotic, task fz32).
    """
    if isinstance(value, bool) or not isinstance(value, int | str):
        return None
    if isinstance(value, str):
        return None if len(value) > 64 else _quantity_text(value)
    return _k8s_quantity(value)


@lru_cache(maxsize=4096)
def _quantity_text(value: str) -> int | None:
    """:func:`parse_quantity` of a string of at most 64 characters, once per text (an
    estate's PVCs, PVs and DataVolumes repeat a few sizes, asked of every VM's disks)."""
    if not _GO_QUANTITY.fullmatch(value.strip()):
        return None
    plain = _PLAIN_QUANTITY.fullmatch(value.strip())
    if plain is not None:  # digits and a binary suffix: nearly every PVC size ("40Gi")
        size = int(plain[1]) * _BINARY_SUFFIXES[plain[2]]
        if size < _EXACT_BELOW:
            return size
    return _k8s_quantity(value)


#: k8s.io/apimachinery pkg/api/resource/quantity.go ``parseQuantityString`` and
#: suffix.go ``interpret``: a sign, ASCII digits with one optional ".", then a decimal SI
#: suffix, a binary one or a decimal exponent (``e3``); blanks around it are trimmed
#: (``UnmarshalJSON``: ``strings.TrimSpace``).
_GO_QUANTITY = re.compile(
    r"[+-]?[0-9]*(?:\.[0-9]*)?(?:[kMGTPEm]|[KMGTPE]i|[eE][+-]?[0-9]+)?", re.ASCII
)
#: The quantities exports nearly always hold, read without the kubernetes client's Decimal
#: arithmetic (9 us a call, twice per PVC): the same value (tests/test_units.py).
_PLAIN_QUANTITY = re.compile(r"([0-9]{1,30})(Ki|Mi|Gi|Ti|Pi|Ei)?")
_BINARY_SUFFIXES = {None: 1, "Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "Ti": 1 << 40}
_BINARY_SUFFIXES.update({"Pi": 1 << 50, "Ei": 1 << 60})
#: Above this, Kubernetes' Decimal arithmetic (28 significant digits) rounds: its answer.
_EXACT_BELOW = 10**27


def _k8s_quantity(value: int | str) -> int | None:
    """:func:`parse_quantity` by Kubernetes' own grammar (``kubernetes.utils.parse_quantity``)."""
    from kubernetes.utils.quantity import parse_quantity as k8s_quantity  # imports the client

    try:
        number: Decimal = k8s_quantity(value.strip() if isinstance(value, str) else value)  # type: ignore[no-untyped-call]
    except (ValueError, ArithmeticError):
        return None
    if not number.is_finite() or number < 0:
        return None
    return int(number.to_integral_value(rounding=ROUND_CEILING))


def dig(obj: Any, *path: str) -> Any:
    """Follow ``path`` through nested dicts; None as soon as a step is missing or not a dict."""
    for key in path:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(key)
    return obj


#: a release version as virt-operator's tag names it: ``v1.5.0``, ``1.5``, ``v1.5.0-rc.1``
_KV_RELEASE = re.compile(r"v?(\d+)\.(\d+)(?:\.\d+)?(?:[-+][0-9A-Za-z.+_-]*)?")
#: ``status.operatorVersion`` of a virt-operator built without a version (kubevirt
#: staging/src/kubevirt.io/client-go/version/base.go ``gitVersion``)
_KV_UNSET = "v0.0.0"
KV_VERSION_SRC = "https://github.com/kubevirt/kubevirt/blob/main/pkg/virt-operator/util/config.go"


def kubevirt_version(cr: Any) -> tuple[tuple[int, int] | None, str]:
    """The (major, minor) KubeVirt release of a KubeVirt CR, and where it was read.

    virt-operator writes ``status.observedKubeVirtVersion`` from its ``KUBEVIRT_VERSION``
    tag ("latest" when unset; a digest, ``devel`` or a nightly build string when deployed
    so: pkg/virt-operator/util/config.go ``getConfig``, ``GetKubeVirtVersion``), and
    ``status.operatorVersion`` from its own build (``version.Get()``, ``v0.0.0-master...``
    when built without one). Only a release version is read; otherwise the operator's own,
    when a release; else ``(None, why)`` naming the values.
    """
    observed = dig(cr, "status", "observedKubeVirtVersion")
    operator = dig(cr, "status", "operatorVersion")
    for field, raw in (("observedKubeVirtVersion", observed), ("operatorVersion", operator)):
        m = _KV_RELEASE.fullmatch(raw.strip()) if isinstance(raw, str) else None
        if m is not None and not raw.strip().startswith(_KV_UNSET):
            return (int(m.group(1)), int(m.group(2))), f"status.{field} {raw.strip()}"
    shown = ", ".join(
        f"{f} {v!r}"
        for f, v in (("observedKubeVirtVersion", observed), ("operatorVersion", operator))
        if v is not None
    )
    return None, (
        f"KubeVirt's release is unknown ({shown or 'no status version'}: an image tag, "
        f"digest or build, not a release version, {KV_VERSION_SRC})"
    )
