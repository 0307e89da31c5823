"""direct_init: the hot frozen dataclasses' __init__ stores what the dataclass's would (issue 15)."""

from __future__ import annotations

import pickle
from dataclasses import (
    MISSING,
    FrozenInstanceError,
    InitVar,
    astuple,
    dataclass,
    field,
    fields,
    replace,
)
from inspect import Parameter, signature
from typing import Any

import pytest

from auditor.checks.registry import Result
from auditor.dictinit import direct_init
from auditor.envelope.rootcause import FindingRef
from auditor.inventory.capture import CaptureStatus, PvcCapture
from auditor.inventory.protection import BackupEval
from auditor.models import Finding, Severity, Status

HOT = [Result, Finding, PvcCapture, BackupEval, FindingRef]


@dataclass(frozen=True)
class Plain:
    name: str
    count: int = 3
    tags: list[str] = field(default_factory=list)
    extra: dict[str, Any] | None = None


@direct_init
@dataclass(frozen=True)
class Direct:
    name: str
    count: int = 3
    tags: list[str] = field(default_factory=list)
    extra: dict[str, Any] | None = None


@direct_init
@dataclass(frozen=True, slots=True)
class SlotDirect:
    name: str
    count: int = 3
    tags: list[str] = field(default_factory=list)
    extra: dict[str, Any] | None = None


def test_hot_classes_store_in_slots_except_the_one_with_cached_properties() -> None:
    # a real instance dict would slow every attribute read (CPython 3.11 inline values);
    # BackupEval has one anyway: its cached_property verdicts write it
    for cls in (Result, Finding, PvcCapture, FindingRef):
        assert "__slots__" in cls.__dict__ and not hasattr(cls(*_ARGS[cls]), "__dict__")
    ev = BackupEval(None, False, "not in it")  # type: ignore[arg-type]
    assert ev.usable is False and ev.unusable_reason == "not in it"
    assert vars(ev)["unusable_reason"] == "not in it"


_ARGS: dict[type, tuple[Any, ...]] = {
    Result: (Status.PASS, "m"),
    Finding: ("RR-BKP-001", Status.PASS, Severity.HIGH, "m"),
    PvcCapture: ("p", "disk", True, CaptureStatus.CAPTURED, None, "item", "r"),
    FindingRef: ("RR-BKP-001", Status.PASS, Severity.HIGH, None),
}


@pytest.mark.parametrize("cls", HOT, ids=lambda c: c.__name__)
def test_hot_classes_take_their_fields_with_their_defaults(cls: type) -> None:
    # the profile's five: each __init__ is the generated one, parameters in field order,
    # defaults the fields' own (a default_factory shown as the factory sentinel)
    assert cls.__init__.__code__.co_filename == f"<direct_init {cls.__qualname__}>"
    params = list(signature(cls).parameters.values())
    assert [p.name for p in params] == [f.name for f in fields(cls)]
    for p, f in zip(params, fields(cls), strict=True):
        assert p.kind is Parameter.POSITIONAL_OR_KEYWORD
        if f.default is not MISSING:
            assert p.default is f.default
        elif f.default_factory is not MISSING:
            assert repr(p.default) == "<factory>"
        else:
            assert p.default is Parameter.empty


@pytest.mark.parametrize("direct", [Direct, SlotDirect], ids=["dict", "slots"])
def test_same_state_as_the_dataclass_init(direct: type[Direct]) -> None:
    for args, kwargs in [
        (("a",), {}),
        (("a", 5), {}),
        (("a",), {"tags": ["x"], "extra": {"k": 1}}),
        ((), {"name": "b", "count": 0, "tags": [], "extra": None}),
    ]:
        plain, made = Plain(*args, **kwargs), direct(*args, **kwargs)
        assert astuple(made) == astuple(plain)
        assert repr(made) == repr(plain).replace("Plain", direct.__name__)
        assert made == direct(*args, **kwargs)
    assert direct("a") != direct("a", 4)


@pytest.mark.parametrize("direct", [Direct, SlotDirect], ids=["dict", "slots"])
def test_factory_default_is_fresh_and_an_explicit_value_is_kept(direct: type[Direct]) -> None:
    one, two = direct("a"), direct("b")
    assert one.tags == [] and one.tags is not two.tags
    mine = ["t"]
    assert direct("a", tags=mine).tags is mine


@pytest.mark.parametrize("direct", [Direct, SlotDirect], ids=["dict", "slots"])
def test_still_frozen_replaceable_picklable_and_hashable(direct: type[Direct]) -> None:
    d = direct("a", 1, ["t"])
    ref = FindingRef("RR-BKP-001", Status.FAIL, Severity.HIGH, None)
    assert hash(ref) == hash(FindingRef("RR-BKP-001", Status.FAIL, Severity.HIGH, None))
    with pytest.raises(FrozenInstanceError):
        d.count = 2  # type: ignore[misc]
    with pytest.raises(FrozenInstanceError):
        del d.name
    assert replace(d, count=2) == direct("a", 2, ["t"])
    assert pickle.loads(pickle.dumps(d)) == d


def test_wrong_arguments_fail_as_before() -> None:
    with pytest.raises(TypeError):
        Direct()  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Direct("a", nope=1)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Direct("a", 1, [], None, 5)  # type: ignore[call-arg]


def _refused(cls: type) -> str:
    with pytest.raises(TypeError) as info:
        direct_init(cls)
    return str(info.value)


def test_refuses_what_it_does_not_cover() -> None:
    @dataclass
    class Mutable:
        a: int

    @dataclass(frozen=True)
    class Post:
        a: int

        def __post_init__(self) -> None:
            pass

    @dataclass(frozen=True)
    class Hidden:
        a: int
        b: int = field(default=0, init=False)

    @dataclass(frozen=True)
    class WithInitVar:
        a: int
        seed: InitVar[int] = 0

    @dataclass(frozen=True)
    class KwOnly:
        a: int = field(kw_only=True)

    @dataclass(frozen=True)
    class Private:
        _a: int

    assert "not a frozen dataclass" in _refused(Mutable)
    assert "not a frozen dataclass" in _refused(int)
    assert "__post_init__" in _refused(Post)
    assert "not its fields" in _refused(Hidden)
    assert "not its fields" in _refused(WithInitVar)
    assert "KwOnly.a is not covered" in _refused(KwOnly)
    assert "Private._a is not covered" in _refused(Private)
