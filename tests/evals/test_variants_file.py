"""Variants as data (issue 41): a TOML file names a base agent and its variants; the CLI runs it
with --junit, an unknown key is refused with its line and the known keys, the log keeps it."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import agentnb as an
from agentnb.__main__ import main

VARIANTS = """\
# three prompts for the weather toy
base = "tests.evals.tuning_agents:polite"
baseline = "polite"

[variants.polite]              # the base as it is

[variants.terse]
instructions = "You are a weather assistant. Answer terse."
max_iterations = 3

[variants.from_file]
instructions_file = "prompts/careful.md"
model_params = { temperature = 0.0 }
"""


def write(folder: Path, text: str = VARIANTS) -> Path:
    (folder / "prompts").mkdir(exist_ok=True)
    (folder / "prompts" / "careful.md").write_text("You are a careful weather assistant.\n")
    path = folder / "variants.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_load_variants_builds_each_from_the_base(tmp_path: Path) -> None:
    found = an.evals.load_variants(write(tmp_path))
    assert list(found) == ["polite", "terse", "from_file"] and found.baseline == "polite"
    assert found["terse"].instructions.endswith("Answer terse.")
    assert found["terse"].max_iterations == 3
    assert found["from_file"].instructions == "You are a careful weather assistant.\n"
    assert found["from_file"].model_params["temperature"] == 0.0
    assert found["polite"].instructions == found["polite"].copy().instructions
    assert found.file["text"] == VARIANTS and len(found.file["digest"]) == 12


def test_a_variants_file_with_three_variants_runs_through_the_cli_with_junit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, junit, log = write(tmp_path), tmp_path / "report.xml", tmp_path / "log.sqlite"
    code = main(["eval", "tests.evals.tuning_agents:tasks", "--variants", str(path),
                 "--junit", str(junit), "--quiet", "--log", str(log), "--repeats", "2"])  # fmt: skip
    out = capsys.readouterr().out
    assert "ok: <Comparison polite vs terse" in out  # 8 tasks cannot prove terse's losses
    assert "ok: <Comparison polite vs from_file" in out
    assert "gate: no regression against polite" in out and code == 0
    suites = {s.get("name"): s for s in ET.parse(junit).getroot()}
    assert set(suites) == {"polite", "terse", "from_file", "gate"}
    assert suites["terse"].get("tests") == "16" and int(suites["terse"].get("failures")) > 0
    assert {c.get("name") for c in suites["gate"]} == {"terse vs polite", "from_file vs polite"}
    (entry,) = an.evals.ExperimentLog(log).entries()
    assert entry["body"]["variants_file"]["text"] == VARIANTS
    assert entry["body"]["variant_order"] == ["polite", "terse", "from_file"]


@pytest.mark.parametrize(
    ("change", "line", "table"),
    [
        (
            "max_iterations = 3\n",
            'max_iterations = 3\ninstruction = "typo"\n',
            "in [variants.terse]",
        ),
        ('baseline = "polite"\n', 'baseline = "polite"\nbasline = "x"\n', "at the top"),
        ("[variants.polite]", "[variants.polite]\ndescription = 'x'", "in [variants.polite]"),
    ],
)
def test_an_unknown_key_is_refused_with_its_line_and_the_known_keys(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], change: str, line: str, table: str
) -> None:
    text = VARIANTS.replace(change, line, 1)
    path = write(tmp_path, text)
    bad = next(
        n
        for n, row in enumerate(text.split("\n"), 1)
        if row.startswith(("instruction ", "basline", "description"))
    )
    with pytest.raises(an.ConfigurationError) as caught:
        an.evals.load_variants(path)
    message = str(caught.value)
    assert message.startswith(f"{path}:{bad}: unknown key") and table in message
    assert "the keys this format knows:" in message
    known = (
        "base, baseline, variants" if table == "at the top" else "instructions, instructions_file"
    )
    assert known in message
    assert main(["eval", "tests.evals.tuning_agents:tasks", "--variants", str(path), "--quiet",
                 "--log", "off"]) == 2  # fmt: skip
    assert f"{path}:{bad}: unknown key" in capsys.readouterr().err


def test_a_missing_file_or_tool_is_refused_naming_it(tmp_path: Path) -> None:
    gone = VARIANTS.replace("prompts/careful.md", "prompts/gone.md")
    with pytest.raises(an.ConfigurationError, match=r"cannot read .*gone\.md"):
        an.evals.load_variants(write(tmp_path, gone))
    tool = VARIANTS + '\n[variants.terse.descriptions]\nsearch_weather = "x"\n'
    with pytest.raises(
        an.ConfigurationError, match=r"variant 'terse': descriptions= names unknown tools"
    ):
        an.evals.load_variants(write(tmp_path, tool))
    with pytest.raises(an.ConfigurationError, match="not TOML"):
        an.evals.load_variants(write(tmp_path, "base = \n"))
