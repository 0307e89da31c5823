"""A cluster export whose names, labels and annotations are hostile, for the report renderers.

``write_hostile_export(root, fetch_url=...)`` writes one file with the all-PASS
VM ``app/vm1`` plus VMs whose name, labels, annotations, NIC and disk names
carry HTML/JS, CSS ``url()``, very long strings, right-to-left and zero-width
characters and CSV formulas. URLs in them point at ``fetch_url`` (a local
server the test runs) so a test can prove the renderers fetched nothing.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml

from tests.scale_support import good_objects, of_kind

__all__ = [
    "HOSTILE_VM_NAMES",
    "benign_twin",
    "hostile_strings",
    "hostile_objects",
    "write_hostile_export",
]

LONG = "L" * 20_000
RTL = "\u202egnp.exe\u202c \u05e9\u05dc\u05d5\u05dd \u0645\u0631\u062d\u0628\u0627 \u200f\u200e\u200b\u2066x\u2069"


def hostile_strings(fetch_url: str) -> dict[str, str]:
    """Name -> hostile value; every URL in them points at ``fetch_url``."""
    return {
        "script": "<script>document.title='pwned'</script>",
        "img-onerror": f"<img src={fetch_url}/img onerror=\"document.title='pwned'\">",
        "attr-break": '" onmouseover="alert(1)" x="<a href=\'javascript:alert(1)\'>j</a>',
        "css-url": f"</style><style>body{{background:url({fetch_url}/css)}}</style>",
        "css-import": f"@import url({fetch_url}/import.css);",
        "svg": f'<svg onload=alert(1)><image href="{fetch_url}/svg"/></svg>',
        "iframe": f'<iframe src="{fetch_url}/iframe"></iframe>',
        "link": f'<link rel=stylesheet href="{fetch_url}/link.css">',
        "template": "{{ 7*7 }}{% raw %}${7*7}#{7*7}",
        "csv-formula": '=HYPERLINK("http://evil.example","click")',
        "csv-plus": "+cmd|' /C calc'!A0",
        "rtl": RTL,
        "long": LONG,
        "newlines": "line1\nline2\r\n\tline3\x0b\x0c",
        "nul": "nul\x00byte",
    }


#: VM names (namespace app) that are themselves hostile.
HOSTILE_VM_NAMES = (
    "<script>alert(1)</script>",
    "vm-\u202eexe.pdf",
    "=cmd|'/C calc'!A0",
    "vm-" + "x" * 300,
)


def _rename_vm(objects: list[dict[str, Any]], new: str) -> list[dict[str, Any]]:
    """A copy of the good VM and its VMI under another name (same disks: a second VM on them)."""
    vm = copy.deepcopy(of_kind(objects, "VirtualMachine")[0])
    vm["metadata"]["name"] = new
    vm["metadata"]["uid"] = f"uid-{abs(hash(new)) % 10**12}"
    return [vm]


def benign_twin(fetch_url: str) -> dict[str, str]:
    """The same keys as :func:`hostile_strings` with plain values (the comparison baseline)."""
    return {k: f"plain {k} text" for k in hostile_strings(fetch_url)}


def hostile_objects(fetch_url: str, *, benign: bool = False) -> list[dict[str, Any]]:
    """Good ``app/vm1`` made hostile in every free-text field, plus hostile-named VMs.

    ``benign=True`` builds the identical export with plain strings and names,
    so a renderer's output for both can be compared element by element.
    """
    objects = good_objects()
    bad = benign_twin(fetch_url) if benign else hostile_strings(fetch_url)
    vm = of_kind(objects, "VirtualMachine")[0]
    meta = vm["metadata"]
    meta["annotations"] = {f"corp.example/{k}": v for k, v in bad.items()}
    meta["annotations"]["description"] = bad["script"] + bad["css-url"]
    # in annotations: the API server refuses a label value with a blank or "<" (fz36 names
    # such a label map and leaves its object unread), an annotation value is free text
    meta["annotations"]["owner"] = bad["img-onerror"][:63]
    meta["annotations"]["team"] = bad["rtl"]
    devices = vm["spec"]["template"]["spec"]["domain"]["devices"]
    devices["disks"][0]["serial"] = bad["attr-break"]
    devices["interfaces"][0]["model"] = bad["svg"]
    for ns in of_kind(objects, "Namespace"):
        ns["metadata"].setdefault("annotations", {})["openshift.io/description"] = bad["iframe"]
        ns["metadata"]["annotations"]["owner"] = bad["csv-formula"]
    for backup in of_kind(objects, "Backup"):
        backup["metadata"].setdefault("annotations", {})["note"] = bad["link"]
    extra: list[dict[str, Any]] = []
    for i, name in enumerate(HOSTILE_VM_NAMES):
        extra += _rename_vm(objects, f"plain-vm-{i}" if benign else name)
    return objects + extra


def write_hostile_export(
    root: Path, *, fetch_url: str = "http://127.0.0.1:9", benign: bool = False
) -> Path:
    """Write the hostile (or benign twin) export as ``root/cluster.yaml``; return ``root``."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "cluster.yaml").write_text(
        yaml.safe_dump_all(
            hostile_objects(fetch_url, benign=benign), sort_keys=True, allow_unicode=True
        ),
        encoding="utf-8",
    )
    return root
