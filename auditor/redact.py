"""Strip secret values from cluster objects before anything else sees them.

VM definitions carry cloud-init ``userData``/``networkData`` (plain or base64),
Windows ``sysprep`` answers and sometimes passwords in annotations; the
``kubectl.kubernetes.io/last-applied-configuration`` annotation repeats the
whole object, secrets included, so its value is dropped too. Sources call
:func:`redact` on every object they return, so no later layer (inventory,
report, logs, the ``collect`` export) can leak them. Secret *references* (a
Secret's name) are kept: a restorer needs to know which Secret to bring back.
"""

from __future__ import annotations

import re
from typing import Any

from auditor.netdata import FACTS_KEY, network_data_facts

__all__ = ["REDACTED", "redact", "SECRET_FIELD_NAMES"]

REDACTED = "<redacted>"

#: Keys whose *value* is secret wherever they appear in an object.
SECRET_FIELD_NAMES = frozenset(
    {
        "userData",
        "userDataBase64",
        "networkData",
        "networkDataBase64",
        "password",
        "passwd",
        "privateKey",
        "token",
        "stringData",
        "data",  # Secret/ConfigMap payloads (also nested data blobs in inline sysprep)
    }
)

# Annotation and label keys that look like they carry a credential.
_SECRET_KEY = re.compile(
    r"(pass(word|wd)?|secret|token|credential|private[-_.]?key|api[-_.]?key)", re.I
)

# Annotations that hold a whole copy of the object as applied, secrets included.
_OBJECT_COPY_KEY = re.compile(r"last-applied-configuration$")

# Kinds whose ``data`` key is a payload; elsewhere ``data`` can be innocent structure.
_DATA_PAYLOAD_KINDS = frozenset({"Secret", "ConfigMap"})


def redact(obj: dict[str, Any]) -> dict[str, Any]:
    """Return a deep copy of ``obj`` with every secret value replaced by ``<redacted>``.

    Handles any depth, so a VirtualMachineSnapshotContent embedding a VM spec,
    or a Template embedding VMs, is covered too. Non-dict input is returned as is.
    """
    kind = obj.get("kind") if isinstance(obj, dict) else None
    if kind == "ConfigMap" and _is_storage_class_map(obj):
        return _storage_class_map(obj)
    return _walk(obj, str(kind) in _DATA_PAYLOAD_KINDS, path=())  # type: ignore[no-any-return]


# Velero's change-storage-class plugin ConfigMap: ``data`` maps StorageClass names to
# StorageClass names (https://velero.io/docs/main/restore-reference/). Only entries whose key
# and value are both valid object names are kept; anything else is redacted like any payload.
_CHANGE_SC = ("velero.io/change-storage-class", "RestoreItemAction")
_OBJECT_NAME = re.compile(r"^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$")


def _is_storage_class_map(obj: dict[str, Any]) -> bool:
    labels = (obj.get("metadata") or {}).get("labels")
    return isinstance(labels, dict) and labels.get(_CHANGE_SC[0]) == _CHANGE_SC[1]


def _storage_class_map(obj: dict[str, Any]) -> dict[str, Any]:
    data = obj.get("data")
    rest = _walk({k: v for k, v in obj.items() if k != "data"}, True, path=())
    if isinstance(data, dict):
        rest["data"] = {
            str(k): v
            if isinstance(v, str) and _OBJECT_NAME.match(str(k)) and _OBJECT_NAME.match(v)
            else REDACTED
            for k, v in data.items()
        }
    elif "data" in obj:
        rest["data"] = REDACTED
    return rest  # type: ignore[no-any-return]


def _walk(value: Any, data_is_payload: bool, path: tuple[str, ...]) -> Any:
    if isinstance(value, dict):
        out: dict[Any, Any] = {}
        in_meta_map = len(path) >= 1 and path[-1] in ("annotations", "labels")
        for key, item in value.items():
            skey = str(key)
            if in_meta_map and (_SECRET_KEY.search(skey) or _OBJECT_COPY_KEY.search(skey)):
                out[key] = REDACTED
            elif skey in SECRET_FIELD_NAMES and (skey != "data" or data_is_payload):
                out[key] = REDACTED if item not in (None, "", {}, []) else item
                facts = network_data_facts(skey, item) if skey.startswith("networkData") else None
                if facts is not None:  # a yes/no fact a restorer needs, taken before stripping
                    out[FACTS_KEY] = facts
            elif skey == "sysprep" and isinstance(item, dict):
                out[key] = _sysprep(item)
            else:
                out[key] = _walk(item, data_is_payload, path + (skey,))
        return out
    if isinstance(value, list):
        return [_walk(v, data_is_payload, path) for v in value]
    return value


def _sysprep(item: dict[str, Any]) -> dict[str, Any]:
    """Keep only the ConfigMap/Secret reference of a sysprep volume."""
    kept: dict[str, Any] = {}
    for ref in ("configMap", "secret"):
        src = item.get(ref)
        if isinstance(src, dict) and "name" in src:
            kept[ref] = {"name": src["name"]}
    return kept or {"value": REDACTED}
