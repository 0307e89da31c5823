"""The docs and help say what the code does: the README's export recipe, the exit-code table,
the CLI help of the options whose behaviour changed. Each test reads the shipped text and
compares it with the code's own tables, so the drift a new-user trial found cannot come back.
"""

from __future__ import annotations

import re
from pathlib import Path

import click

from auditor.cli import main
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


def _commands(cmd: click.Command, name: str) -> list[tuple[str, click.Command]]:
    if isinstance(cmd, click.Group):
        return [x for n, c in cmd.commands.items() for x in _commands(c, f"{name} {n}")]
    return [(name, cmd)]


def test_every_option_of_every_command_says_what_it_does() -> None:
    """``--help`` describes every option (dx29: --addressing-style, --ca-bundle,
    --object-lock-mode, --retry-mode, fleet/report --out and serve --log-level showed a bare
    name, so a new user could not tell what they do or that the lock mode needs its days)."""
    bare = [
        f"{name} {p.opts[0]}"
        for name, cmd in _commands(main, "auditor")
        for p in cmd.params
        if isinstance(p, click.Option) and not (p.help or "").strip()
    ]
    assert bare == []


def test_options_named_in_the_docs_exist() -> None:
    """Every ``--option`` the README, docs/*.md and the example config give an ``auditor
    <command>`` line exists on that command (a renamed or removed option cannot linger)."""
    files = [
        REPO / "README.md",
        *sorted((REPO / "docs").glob("*.md")),
        REPO / "config" / "auditor.example.yaml",
    ]
    commands = dict(_commands(main, "auditor"))
    wrong = []
    for file in files:
        text = file.read_text().replace("\\\n", " ")
        for m in re.finditer(r"auditor ((?:checks )?[a-z][a-z-]*)([^`\n#|]*)", text):
            cmd = commands.get(f"auditor {m.group(1)}")
            if cmd is None:
                continue  # prose ("the auditor reads ...")
            known = {o for p in cmd.params for o in (*p.opts, *p.secondary_opts)} | {"--help"}
            for option in re.findall(r"(?<![\w-])--[a-z][a-z-]*", m.group(2)):
                if option not in known:
                    wrong.append(f"{file.name}: auditor {m.group(1)} {option}")
    assert wrong == []


def test_docs_name_every_key_whose_value_reports_show() -> None:
    """An auditor archiving reports must know which label and annotation values they hold:
    the README and docs/scale.md name every bare key ``auditor/redact.py`` shows (dx29: they
    said ``app``/``tier``/``env``, while ``name``, ``component``, ``part-of`` and
    ``environment`` values, and ``description`` annotations, were shown too)."""
    from auditor import redact

    names: set[str] = set()
    for pattern in (redact._SHOWN_ANNOTATION.pattern, redact._SHOWN_LABEL.pattern):
        for group in re.findall(r"\(\?:\[\^/\]\*/\)\?\(\?:([a-z|-]+)\)", pattern):
            names |= set(group.split("|"))
    names.add("description")
    assert {"owner", "app", "tier", "environment"} <= names
    readme = (REPO / "README.md").read_text()
    readme = " ".join(readme[readme.index("Reports show a VM annotation") :].split()[:120])
    scale = (REPO / "docs" / "scale.md").read_text()
    scale = " ".join(scale[scale.index("Reports show") :].split()[:120])
    assert sorted(n for n in names if f"`{n}`" not in readme) == []
    assert sorted(n for n in names if not re.search(rf"[`/]{re.escape(n)}[`/]", scale)) == []


def test_report_schema_doc_sketches_every_run_field() -> None:
    """docs/report-schema.md's sketch of ``run`` names every field report.json's ``run`` has
    (dx29: ``run.backup_storage``, where bucket reads are recorded, was missing)."""
    from auditor.envelope.model import Run

    text = (REPO / "docs" / "report-schema.md").read_text()
    sketch = text[text.index('  "run": {') : text.index('  "cluster": {')]
    named = set(re.findall(r'^    "([a-z_]+)":', sketch, re.M))
    assert named == set(Run.model_fields)


def test_adding_a_check_example_takes_a_free_id() -> None:
    """docs/adding-a-check.md's example registers an id no check has (dx29: it used
    RR-DSK-003, which the registry refuses as a duplicate) of a declared family."""
    from auditor.checks import CATALOG
    from auditor.models import FAMILIES

    text = (REPO / "docs" / "adding-a-check.md").read_text()
    found = re.search(r'@check\(\s*"(RR-([A-Z]+)-\d{3})"', text)
    assert found is not None
    assert found.group(1) not in CATALOG
    assert found.group(2) in FAMILIES


def test_checks_show_says_what_requires_means() -> None:
    """``checks show`` labels ``requires`` as what it is, the kinds whose list must be read in
    full or the check gives ERROR (dx29: "needs: Backup, Namespace" read as all RR-BKP-013
    reads, which judges the Schedules' locations and the DPA too; Schedule is required since
    lo30)."""
    from click.testing import CliRunner

    out = CliRunner().invoke(main, ["checks", "show", "RR-BKP-013"])
    assert out.exit_code == 0, out.output
    assert "ERROR unless read in full: Backup, Namespace, Schedule\n" in out.output
    assert "needs:" not in out.output


def test_service_doc_names_every_threshold_and_source_field() -> None:
    """docs/service.md's list of the default policy's thresholds and of the source fields
    names each one (dx29: require_immutable_backups and velero_namespaces were missing)."""
    from auditor.config.rules import Thresholds
    from auditor.config.service import ClusterSourceSettings

    text = " ".join((REPO / "docs" / "service.md").read_text().split())
    fields = [*Thresholds.model_fields, *ClusterSourceSettings.model_fields]
    assert [f for f in fields if f"`{f}`" not in text and f != "type"] == []
