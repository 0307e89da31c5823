"""Write what a source read as an export the directory source reads back.

Layout (the same as ``oc get <plural> -A -o yaml > <plural>.yaml`` per kind)::

    OUT/<plural>.yaml              a v1 List per kind that was read (empty lists too)
    OUT/.auditor-collection.json   what the files cannot say: kinds not installed,
                                   partial or unavailable, and the collection problems

Objects are written as the source returns them, so already redacted (no
cloud-init userData/networkData, sysprep, passwords or keys). UNAVAILABLE kinds
get no file: absence of a file is what "unknown" means to the directory source.
The record is a hidden file, so the directory source does not take it for a
cluster object; :func:`apply_record` folds it back in.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from auditor.kinds import BY_KIND, KINDS
from auditor.models import CollectionProblem
from auditor.sources.base import ClusterData, KindState

__all__ = ["RECORD_NAME", "ExportError", "write_export", "apply_record"]

RECORD_NAME = ".auditor-collection.json"
_RECORD_FORMAT = 1
_Dumper: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class ExportError(Exception):
    """The output directory cannot be used (it exists and is not empty, or is a file)."""


def write_export(data: ClusterData, out: Path) -> list[Path]:
    """Write ``data`` under ``out`` (created; must be new or empty); return the files written.

    Raises:
        ExportError: ``out`` is a file or a non-empty directory (stale files from
            an earlier collection would be read back as current).
    """
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ExportError(f"output directory {out} exists and is not empty; choose a new one")
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for spec in KINDS:
        if data.state(spec.kind) is KindState.UNAVAILABLE:
            continue
        doc = {
            "apiVersion": "v1",
            "kind": "List",
            "metadata": {"resourceVersion": ""},
            "items": data.of(spec.kind),
        }
        path = out / f"{spec.plural}.yaml"
        with path.open("w", encoding="utf-8") as fh:
            yaml.dump(doc, fh, Dumper=_Dumper, sort_keys=True, allow_unicode=True)
        written.append(path)
    record = {
        "format": _RECORD_FORMAT,
        "source": {"type": data.info.type, "location": data.info.location},
        "states": {k.kind: data.state(k.kind).value for k in KINDS},
        "problems": [p.to_dict() for p in data.problems],
    }
    path = out / RECORD_NAME
    path.write_text(json.dumps(record, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    written.append(path)
    return written


def apply_record(root: Path, data: ClusterData) -> None:
    """Fold ``root``'s collection record (if any) into what the files gave.

    The record can only lower trust: a kind read COMPLETE from its file becomes
    PARTIAL or UNAVAILABLE, or NOT_INSTALLED when its list is empty, and a kind
    recorded UNAVAILABLE with no file is marked so; its problems are appended. An unreadable record is itself a collection problem.
    """
    path = root / RECORD_NAME
    if not root.is_dir() or not path.is_file():
        return
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
        states = {k: KindState(v) for k, v in record["states"].items() if k in BY_KIND}
        problems = [_problem(p) for p in record["problems"]]
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        data.problems.append(
            CollectionProblem(
                reason=f"file {RECORD_NAME} could not be read: {exc}", file=RECORD_NAME
            )
        )
        return
    for kind, recorded in states.items():
        if kind not in data.states and recorded is KindState.UNAVAILABLE:
            data.states[kind] = recorded  # no file, as written: say so explicitly
        if data.states.get(kind) is not KindState.COMPLETE:
            continue
        if recorded in (KindState.PARTIAL, KindState.UNAVAILABLE) or (
            recorded is KindState.NOT_INSTALLED and not data.of(kind)
        ):
            data.states[kind] = recorded
    data.problems.extend(problems)


def _problem(raw: dict[str, Any]) -> CollectionProblem:
    fields = {k: raw.get(k) for k in ("file", "kind", "namespace", "name", "field")}
    return CollectionProblem(
        reason=str(raw["reason"]),
        kinds=tuple(str(k) for k in raw.get("kinds") or ()),
        **{k: (str(v) if v is not None else None) for k, v in fields.items()},
    )
