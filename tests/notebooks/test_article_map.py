"""docs/article_map.csv and notebooks/README.md point at sections that exist, and every claim
the map calls ``shown`` is in the output a learner sees.

The map lists the three articles item by item (1-140, the item list of record, then 141-152
the audit of issue 42 added), each with the notebook and the heading of the section where a
learner runs it; the README's pitfall table names sections the same way. Both drift when a
notebook is restructured: these tests say where. A ``shown`` row also names the ``cell`` (its
id) whose executed output shows the claim and a literal ``output`` found there: checked
against the notebooks as the lab environment runs them (the tier's cache: none runs twice).
(Whether each anchor is the article's text is checked by ``scripts/check_quotes.py``, which
reads the articles; the repository does not hold them.)
"""

from __future__ import annotations

import csv
import re
from collections.abc import Callable
from typing import Any

import pytest

from tests.notebooks.conftest import Executed
from tests.notebooks.curriculum import ROOT, headings, names

MAP = ROOT / "docs" / "article_map.csv"
COLUMNS = ["item", "article", "section", "kind", "what", "anchor", "notebook", "heading"]
COLUMNS += ["status", "note", "cell", "output"]


def rows() -> list[dict[str, str]]:
    with MAP.open(encoding="utf-8", newline="") as f:
        reader = csv.DictReader(f)
        assert reader.fieldnames == COLUMNS
        return list(reader)


#: The audit's items (issue 42): 1-140 the item list of record, 141-152 the ones it added.
AUDITED = 152
STATUSES = ("shown", "partial", "absent")


def test_the_map_numbers_every_item_once():
    numbers = [int(r["item"]) for r in rows()]
    assert numbers[:AUDITED] == list(range(1, AUDITED + 1))
    assert numbers == list(range(1, len(numbers) + 1)), "the new lessons' items follow, in order"


def test_each_row_is_complete():
    for r in rows():
        assert r["article"] in ("000", "001", "002"), r
        assert re.fullmatch(r"§\d+(\.\d+)?", r["section"]), r
        assert r["kind"] in ("stage", "example", "pitfall", "advice"), r
        assert r["what"] and r["anchor"], r
        assert r["status"] in STATUSES, r
        # a claim not (wholly) shown says what is missing
        assert r["status"] == "shown" or r["note"], f"item {r['item']}: {r['status']}, no note"


def test_items_1_to_140_are_shown():
    """Issue 31: every item of the list of record runnable and shown, on the travel example."""
    for r in rows()[:140]:
        assert r["status"] == "shown", f"item {r['item']} is not shown: {r['status']}"


# -- the pointers: each shown claim in the executed output of the cell the row names -------
def output_text(cell: dict[str, Any]) -> str:
    """What a reader sees of a cell's executed output as text: each stream's text and each
    result's or display's text/plain, in order."""
    parts = []
    for output in cell.get("outputs", []):
        value = output.get("text") if output["output_type"] == "stream" else None
        if value is None:
            value = output.get("data", {}).get("text/plain", "")
        parts.append("".join(value) if isinstance(value, list) else value)
    return "\n".join(parts)


def wrong_pointers(notebook: dict[str, Any], claims: list[dict[str, str]]) -> list[str]:
    """Each shown claim whose ``cell`` is not in ``notebook`` (executed), or whose output
    does not contain the row's ``output``, in plain words; [] when every pointer holds."""
    by_id = {c.get("id"): c for c in notebook["cells"]}
    wrong = []
    for r in claims:
        where = f"item {r['item']} ({r['notebook']}, cell {r['cell']!r})"
        if not r["cell"] or not r["output"]:
            wrong.append(f"{where}: shown, but no cell and output point at it")
        elif r["cell"] not in by_id:
            wrong.append(f"{where}: no cell with this id")
        elif r["output"] not in output_text(by_id[r["cell"]]):
            seen = output_text(by_id[r["cell"]])[:200]
            wrong.append(f"{where}: its output lacks {r['output']!r} (it begins {seen!r})")
    return wrong


def shown_in(notebook: str) -> list[dict[str, str]]:
    return [r for r in rows() if r["notebook"] == notebook and r["status"] == "shown"]


def _fake(outputs: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    return {"cells": [{"id": k, "cell_type": "code", "outputs": v} for k, v in outputs.items()]}


def test_a_wrong_pointer_is_named():
    """The check itself, on a fake executed notebook: a pointer holds only where the row says."""
    executed = _fake(
        {
            "latency": [{"output_type": "stream", "name": "stdout", "text": ["latency: 0.2 s\n"]}],
            "verdict": [{"output_type": "execute_result", "data": {"text/plain": "B is better"}}],
        }
    )
    row = {"item": "1", "notebook": "nb"}
    good = [
        {**row, "cell": "latency", "output": "0.2 s"},
        {**row, "cell": "verdict", "output": "B"},
    ]
    assert wrong_pointers(executed, good) == []
    assert wrong_pointers(executed, [{**row, "cell": "latency", "output": "grows"}])
    assert wrong_pointers(executed, [{**row, "cell": "verdict", "output": "0.2 s"}])
    assert "no cell" in wrong_pointers(executed, [{**row, "cell": "gone", "output": "B"}])[0]
    assert "no cell and output" in wrong_pointers(executed, [{**row, "cell": "", "output": ""}])[0]


#: The notebooks a shown claim points into, as the executed cache names them.
POINTED = sorted({f"{r['notebook']}.ipynb" for r in rows() if r["status"] == "shown"})


@pytest.mark.notebooks
@pytest.mark.parametrize("notebook", POINTED)
def test_each_shown_claim_is_in_its_cell_s_executed_output(
    executed: Callable[[str], Executed], notebook: str
) -> None:
    run = executed(notebook)
    assert run.returncode == 0, run.report
    wrong = wrong_pointers(run.notebook, shown_in(notebook.removesuffix(".ipynb")))
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("row", rows(), ids=lambda r: f"item-{r['item']}")
def test_the_mapped_section_exists(row):
    assert row["notebook"] in names(), row["notebook"]
    assert row["heading"] in headings(row["notebook"]), (
        f"item {row['item']}: no heading {row['heading']!r} in {row['notebook']}"
    )


def test_the_issue_s_named_items_are_where_it_put_them():
    """Issue 31 names items by number; those numbers keep their meaning here."""
    by_number = {int(r["item"]): r for r in rows()}
    named = {2: "§2.4", 8: "§2.1", 12: "§2.2", 18: "§1.1", 32: "§3.3", 48: "§5.2", 61: "§2.1"}
    named |= {76: "§5.1", 77: "§5.2", 86: "§1.2", 91: "§2.2", 116: "§4.1", 123: "§5.4"}
    for number, section in named.items():
        assert by_number[number]["section"] == section, by_number[number]
    assert "OpenAPI" in by_number[12]["anchor"] and "fallback" in by_number[48]["anchor"]


def readme_references() -> list[tuple[str, str]]:
    """(notebook number, heading) for every section the README's tables name."""
    text = (ROOT / "notebooks" / "README.md").read_text(encoding="utf-8")
    found = []
    for line in text.splitlines():
        if not line.startswith("| ") or line.count("|") < 4:
            continue
        where = line.rstrip(" |").rsplit(" | ", 1)[-1]
        for part in where.split(";"):
            match = re.match(r"\s*(\d\d) (.*)", part)
            if match:
                found += [(match.group(1), h) for h in re.findall(r'"([^"]+)"', match.group(2))]
    return found


def test_the_readme_names_sections_that_exist():
    references = readme_references()
    assert len(references) > 40
    by_number = {n[:2]: n for n in names()}
    missing = [(n, h) for n, h in references if h not in headings(by_number[n])]
    assert not missing, missing


def test_the_readme_maps_the_five_layers_of_article_002():
    text = (ROOT / "notebooks" / "README.md").read_text(encoding="utf-8")
    layers = re.findall(r"^\| (\d)\. ([a-z ]+) \|", text, flags=re.M)
    assert [n for n, _ in layers] == ["1", "2", "3", "4", "5"]
    assert "configuration management" in text
