"""Find the nulls a VirtualMachine read from the API server cannot hold.

The API server prunes a null value of every custom-resource field whose schema is not
``nullable`` (https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/
custom-resource-definitions/#defaulting-and-nullable), and never writes a null
``metadata.labels`` or ``metadata.annotations`` (``ObjectMeta``'s maps are ``omitempty``).
KubeVirt's VirtualMachine schema marks nullable only the fields in :data:`NULLABLE`
(kubevirt ``pkg/virt-operator/resource/generate/components/validations_generated.go``,
``"virtualmachine"``). A null anywhere else in ``spec`` is a damaged or edited copy: read as
"absent" it silently changed findings (``firmware: null`` dropped RR-FW-002's FAIL to
NOT_APPLICABLE, ``labels: null`` made Backups that select or exclude the VM by label miss
it, ``disks: null`` made every disk a volume of no bus; bench.mutations null_list), so each
is a named problem and the checks that read the field give ERROR.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["NULLABLE", "pruned_nulls"]

#: Field paths of a VirtualMachine's ``spec`` (``[*]``: any list item) whose null the API
#: server keeps, with everything below them (``spec.template.metadata`` preserves unknown
#: fields, as the ``creationTimestamp: null`` every exported template holds); a DataVolume
#: template itself may be null too, but not its ``spec``.
NULLABLE = (
    "spec.dataVolumeTemplates[*].metadata",
    "spec.dataVolumeTemplates[*].status",
    "spec.template.metadata",
)


def _regex(paths: tuple[str, ...], tail: str) -> re.Pattern[str]:
    return re.compile(
        "(?:"
        + "|".join(re.escape(p).replace(re.escape("[*]"), r"\[[^\]]*\]") for p in paths)
        + ")"
        + tail
    )


_NULLABLE_RE = _regex(NULLABLE, r"(?:$|[.\[])")
_NULLABLE_ITEM_RE = _regex(("spec.dataVolumeTemplates[*]",), "$")
_REASON = "is null, which the API server never stores (a damaged or edited copy)"


def pruned_nulls(vm: dict[str, Any]) -> list[tuple[str, str]]:
    """``(field path, reason)`` for each null of ``vm`` (a VirtualMachine dict) below
    ``spec`` outside :data:`NULLABLE`, and for a null ``metadata.labels`` or
    ``metadata.annotations``. List items are named by their ``name`` when they have a string
    one (``volumes[rootdisk]``, as :mod:`auditor.inventory.vmvalidate` names them), else by
    index."""
    out: list[tuple[str, str]] = []
    meta = vm.get("metadata")
    if isinstance(meta, dict):
        out += [(f"metadata.{k}", _REASON) for k in ("labels", "annotations") if _null(meta, k)]
    spec = vm.get("spec")
    if isinstance(spec, dict | list):
        _walk(spec, "spec", out)
    return out


def _null(mapping: dict[str, Any], key: str) -> bool:
    return key in mapping and mapping[key] is None


def _walk(value: dict[str, Any] | list[Any], path: str, out: list[tuple[str, str]]) -> None:
    if _NULLABLE_RE.match(path):
        return
    items: list[tuple[str, Any]]
    if isinstance(value, dict):
        items = [(f"{path}.{k}", v) for k, v in value.items()]
    else:
        items = [(f"{path}[{_label(v, i)}]", v) for i, v in enumerate(value)]
    for at, v in items:
        if v is None and not (_NULLABLE_RE.match(at) or _NULLABLE_ITEM_RE.match(at)):
            out.append((at, _REASON))
        elif isinstance(v, dict | list):
            _walk(v, at, out)


def _label(item: Any, index: int) -> str:
    name = item.get("name") if isinstance(item, dict) else None
    return name if isinstance(name, str) and name else str(index)
