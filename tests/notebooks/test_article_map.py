"""docs/article_map.csv and notebooks/README.md point at sections that exist.

The map lists the three articles item by item (1-140), each with the notebook and the heading
of the section where a learner runs it; the README's pitfall table names sections the same
way. Both drift when a notebook is restructured: these tests say where. (Whether each anchor
is the article's text is checked by ``scripts/check_quotes.py``, which reads the articles;
the repository does not hold them.)
"""

from __future__ import annotations

import csv
import re

import pytest

from tests.notebooks.curriculum import ROOT, headings, names

MAP = ROOT / "docs" / "article_map.csv"
COLUMNS = ["item", "article", "section", "kind", "what", "anchor", "notebook", "heading"]
COLUMNS += ["status", "note", "cell", "output"]


def rows() -> list[dict[str, str]]:
    with MAP.open(encoding="utf-8", newline="") as f:
        reader = csv.DictReader(f)
        assert reader.fieldnames == COLUMNS
        return list(reader)


def test_the_map_numbers_every_item_once():
    assert [int(r["item"]) for r in rows()] == list(range(1, 141))


def test_each_row_is_complete():
    for r in rows():
        assert r["article"] in ("000", "001", "002"), r
        assert re.fullmatch(r"§\d+(\.\d+)?", r["section"]), r
        assert r["kind"] in ("stage", "example", "pitfall", "advice"), r
        assert r["what"] and r["anchor"], r
        # issue 31: every item runnable and shown in a notebook, on the travel example
        assert r["status"] == "shown", f"item {r['item']} is not shown: {r['status']}"


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
