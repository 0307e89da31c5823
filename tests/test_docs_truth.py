"""The docs and help say what the code does: the README's export recipe, the exit-code table,
the CLI help of the options whose behaviour changed. Each test reads the shipped text and
compares it with the code's own tables, so the drift a new-user trial found cannot come back.
"""

from __future__ import annotations

import re
from pathlib import Path

from auditor.kinds import INFRASTRUCTURE, KINDS

REPO = Path(__file__).resolve().parent.parent


def _readme_export_files() -> set[str]:
    """The file stems the README's ``oc get`` recipe writes (``export/<stem>.yaml``)."""
    text = (REPO / "README.md").read_text()
    block = text[text.index("## Audit an exported cluster") :].split("```", 2)[1]
    loop = re.search(r"for r in (.*?); do", block, re.S)
    assert loop is not None, "the README's export loop is gone"
    stems = {word.split(".", 1)[0] for word in loop.group(1).replace("\\", " ").split()}
    stems |= set(re.findall(r"> export/([a-z-]+)\.yaml", block)) - {"${r%%"}
    return stems


def test_readme_export_recipe_writes_every_kind_read() -> None:
    """A kind with no file is unknown and its checks give ERROR, so the recipe must export
    every kind the directory source reads (dx29: ``services`` was missing, so RR-NET-003
    gave ERROR and a READY VM of the example read UNKNOWN for anyone who followed it)."""
    wanted = {k.plural for k in KINDS} | {INFRASTRUCTURE.plural}
    assert _readme_export_files() == wanted


def test_readme_lists_every_kind_read() -> None:
    """The README's list of kinds the directory source reads names each of them."""
    text = (REPO / "README.md").read_text()
    para = text[text.index("What the directory source reads") :].split("\n\n", 1)[0]
    flat = " ".join(para.split())
    short = {
        "VirtualMachineInstance": "VirtualMachine/Instance",
        "PersistentVolumeClaim": "PVC",
        "PersistentVolume": "PV",
        "VolumeSnapshotContent": "VolumeSnapshot/Content",
        "VolumeSnapshotClass": "Content/Class",
        "VirtualMachineSnapshotContent": "VirtualMachineSnapshot/Content",
        "VirtualMachineInstancetype": "instancetypes",
        "VirtualMachineClusterInstancetype": "instancetypes",
        "VirtualMachinePreference": "preferences",
        "VirtualMachineClusterPreference": "preferences",
    }
    missing = [k.kind for k in (*KINDS, INFRASTRUCTURE) if short.get(k.kind, k.kind) not in flat]
    assert missing == []


def test_report_schema_doc_names_everything_the_run_id_covers() -> None:
    """docs/report-schema.md lists what the run id is a digest of: every key ``run_key`` hashes
    (dx29: the formats written joined it, the doc still said two runs of one instant with
    other ``--format`` sets share an id)."""
    import ast
    import inspect

    from auditor.envelope import digest

    tree = ast.parse(inspect.getsource(digest.run_key))
    keys: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            keys |= {k.value for k in node.keys if isinstance(k, ast.Constant)}
        elif (
            isinstance(node, ast.Subscript)
            and isinstance(node.ctx, ast.Store)
            and isinstance(node.slice, ast.Constant)
        ):
            keys.add(node.slice.value)
    doc_term = {
        "input_digest": "`input_digest`",
        "tool_version": "`tool_version`",
        "source": "`source`",
        "owner_filter": "`owner_filter`",
        "cluster_name": "configured cluster name",
        "ownership": "ownership rules",
        "thresholds": "thresholds",
        "policies": "policies",
        "waivers": "waivers",
        "formats": "set of formats the run writes",
    }
    text = (REPO / "docs" / "report-schema.md").read_text()
    para = " ".join(text[text.index("The run id is the") :].split("\n\n", 1)[0].split())
    assert keys == set(doc_term), "a new run id input: name it in docs/report-schema.md"
    assert [k for k, term in doc_term.items() if term not in para] == []
