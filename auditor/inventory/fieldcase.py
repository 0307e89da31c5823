"""Find the keys of a VirtualMachine's spec that no KubeVirt field is spelled as.

Every field of KubeVirt's VirtualMachine API is lowerCamelCase (kubevirt.io/api core/v1 JSON
names; ``validations_generated.go``, ``"virtualmachine"``, holds none that starts with a
capital), and the API server prunes a field its schema does not know
(https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/
custom-resource-definitions/#field-pruning). A key that starts with a capital letter
(``Firmware``, ``Persistent``, ``Uuid``) outside the free-form maps is therefore no field a
cluster stored: the copy was edited, and the field it stands for is missing from it. Read as
absent, an EFI VM's ``persistent: true`` written ``Persistent`` made its NVRAM volatile and
a pinned ``uuid`` written ``Uuid`` an unpinned one, with nothing named (bench.mutations
key_case, seeds 410 and 411).

A key of a known field in another case that starts with a small letter (``claimname``,
``bootorder``, ``macaddress``: all lower-case) is found through the generated list of the
APIs' field names (:func:`auditor.fieldnames.spelled_as`): read as absent, a claim written
``claimname`` dropped the disk from the backup checks with nothing named (bench.mutations
key_case, seeds 430 and 440; task fz32). The same holds for a VM's or VMI's top-level
``metadata`` keys (``creationtimestamp``).

A key of the firmware or TPM block that is no field of its KubeVirt type at all (``x``,
``uuidd``) is pruned by the API server likewise, so the copy was edited and what the key held
is missing: :data:`CLOSED` lists those small blocks and their fields (kubevirt.io/api core/v1
``Firmware``, ``Bootloader``, ``EFI``, ``BIOS``, ``TPMDevice`` in
https://github.com/kubevirt/kubevirt/blob/main/staging/src/kubevirt.io/api/core/v1/schema.go).
Read as absent and unnamed, a firmware block ``{x: y}`` lost its UUID and a TPM block its
``persistent`` (round h47c's "left"; round h48b).
"""

from __future__ import annotations

from typing import Any

from auditor.fieldnames import FIELD_NAMES, spelled_as

__all__ = ["CLOSED", "FREE_FORM", "miscased_keys"]

#: Keys whose value is a free-form map (label, annotation and selector maps, resource
#: names, the template's metadata, the domain clock's preserved fields): their keys are
#: not field names.
FREE_FORM = frozenset(
    {
        "labels",
        "annotations",
        "matchLabels",
        "nodeSelector",
        "requests",
        "limits",
        "metadata",
        "clock",
        "capacity",
    }
)


#: The firmware and TPM blocks, by ``(parent key, key)``, and the fields of their KubeVirt
#: types (https://github.com/kubevirt/kubevirt/blob/main/staging/src/kubevirt.io/api/core/v1/
#: schema.go: ``Firmware`` under ``DomainSpec.Firmware``, ``Bootloader``, ``EFI``, ``BIOS``
#: and ``TPMDevice`` under ``Devices.TPM``). Each is a structural schema without
#: ``x-kubernetes-preserve-unknown-fields``, so a stored block holds no other key.
CLOSED: dict[tuple[str, str], frozenset[str]] = {
    ("domain", "firmware"): frozenset({"uuid", "bootloader", "serial", "kernelBoot", "acpi"}),
    ("firmware", "bootloader"): frozenset({"bios", "efi"}),
    ("bootloader", "efi"): frozenset({"secureBoot", "persistent"}),
    ("bootloader", "bios"): frozenset({"useSerial"}),
    ("devices", "tpm"): frozenset({"enabled", "persistent"}),
}
_CLOSED_KEYS = frozenset(key for _, key in CLOSED)


#: The field names no key is flagged for (:func:`_stands_for` is None for each): those that
#: do not start with an ASCII capital. A mapping whose keys are all among them is passed over
#: by one subset test in C instead of a call per key (issue 15: a 10,000-VM audit walks about
#: 1.5 million keys of VM and VMI specs).
_PLAIN = frozenset(k for k in FIELD_NAMES if not (k[:1].isascii() and k[:1].isupper()))
_NESTS = (dict, list)


def miscased_keys(vm: dict[str, Any]) -> list[tuple[str, str]]:
    """``(field path, reason)`` for each key below ``vm['spec']`` (a VirtualMachine's or a
    VirtualMachineInstance's: both KubeVirt schemas are lowerCamelCase) that starts with an
    ASCII capital letter or has a blank or invisible character around it
    (:func:`auditor.fieldnames.fold_key`), outside :data:`FREE_FORM` maps, named at the path
    of the field it stands for (``Firmware`` or ``"firmware "`` at ``...domain.firmware``); a
    top-level key so written (``" spec"``) is named at its own field. List items are named by their
    ``name`` when they have a string one, else by index."""
    out: list[tuple[str, str]] = []
    if not vm.keys() <= _PLAIN:
        # a top-level key with a blank around it or in another case (``" status"``, ``Spec``)
        for key in vm:
            field = _stands_for(key)
            if field is not None:
                out.append((field, _why(key)))
    meta = vm.get("metadata")
    if isinstance(meta, dict) and not meta.keys() <= _PLAIN:
        for key in meta:
            field = _stands_for(key)
            if field is not None:
                out.append((f"metadata.{field}", _why(key)))
    spec = vm.get("spec")
    if isinstance(spec, dict):
        _walk(spec, "spec", out)
    return out


def _stands_for(key: object) -> str | None:
    """The field name ``key`` stands for when no KubeVirt field is spelled so, else None: a
    key that starts with an ASCII capital (every field is lowerCamelCase) or a known field in
    another case (:func:`auditor.fieldnames.spelled_as`)."""
    if isinstance(key, str) and key[:1].isascii() and key[:1].isupper():
        return spelled_as(key) or f"{key[0].lower()}{key[1:]}"
    return spelled_as(key)


def _why(key: str) -> str:
    return (
        f"is written {key!r:.40}, no field of KubeVirt's VirtualMachine (its fields are "
        "lowerCamelCase, with no blank around them, and the API server prunes an unknown "
        "one): the field is missing from this copy"
    )


def _walk(value: dict[str, Any] | list[Any], path: str, out: list[tuple[str, str]]) -> None:
    if isinstance(value, list):
        for i, item in enumerate(value):
            if isinstance(item, _NESTS):
                name = item.get("name") if isinstance(item, dict) else None
                label = name if isinstance(name, str) and name else str(i)
                _walk(item, f"{path}[{label}]", out)
        return
    plain = value.keys() <= _PLAIN  # no key to name: skip the per-key test
    for key, item in value.items():
        if not plain:
            field = _stands_for(key)
            if field is not None:
                # named at the field it stands for, so that the checks reading that field ERROR
                out.append((f"{path}.{field}", _why(key)))
                continue
        if isinstance(item, _NESTS) and key not in FREE_FORM:
            if key in _CLOSED_KEYS and isinstance(item, dict):
                _closed(item, path, key, out)
            _walk(item, f"{path}.{key}", out)


def _closed(block: dict[str, Any], path: str, key: str, out: list[tuple[str, str]]) -> None:
    """Name each key of ``block`` (the value of ``key`` below ``path``) that is no field of
    its KubeVirt type (:data:`CLOSED`), at its own path: a key in another case or with a
    blank is named by :func:`_walk` at the field it stands for, so it is passed over here."""
    fields = CLOSED.get((path.rpartition(".")[2], key))
    if fields is None or block.keys() <= fields:
        return
    for k in block:
        if k in fields or _stands_for(k) is not None:
            continue
        out.append(
            (
                f"{path}.{key}.{k!s:.40}",
                f"is {k!r:.40}, no field of KubeVirt's {_TYPE[key]} (its fields: "
                f"{', '.join(sorted(fields))}; the API server prunes an unknown one): the copy "
                "was edited and what the key stood for is missing from it",
            )
        )


_TYPE = {
    "firmware": "Firmware",
    "bootloader": "Bootloader",
    "efi": "EFI",
    "bios": "BIOS",
    "tpm": "TPMDevice",
}
