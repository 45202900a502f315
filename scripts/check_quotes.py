"""Check the curriculum's Chinese quotations against the three source articles (one-off).

    python scripts/check_quotes.py ../shared/seeds          # the folder holding 000_…, 001_…, 002_…

The articles are not part of the repository and nothing else here reads them; run this when
the notebooks or docs/article_map.csv change. It checks two things:

* every ``anchor`` of ``docs/article_map.csv`` occurs in the article its row names;
* every Chinese passage in quotation marks (「…」, “…”, "…") in the notebooks' prose (markdown
  cells), ``notebooks/README.md`` and ``docs/*.md`` is either a quotation of an article or
  agentnb's own text: found in the notebook's code or the package's source and data (a
  request, an instruction, an answer). A passage that is neither is reported, and so is a
  passage in agentnb's words whose sentence credits an article;
* every longer Chinese passage without quotation marks (8 characters or more, outside
  `code`) whose sentence credits an article is in that article: a paraphrase in Chinese
  must not read as the article's words.

Comparisons ignore whitespace, punctuation and case: the copies of the articles lost most of
their punctuation (，。：) when they were saved, so a quotation is verbatim when its letters
and digits appear in the article in the same order, uninterrupted.
"""

from __future__ import annotations

import csv
import json
import re
import sys
import unicodedata
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
QUOTED = re.compile(r"「([^」]+)」|“([^”]+)”|\"([^\"\n]+)\"")
CJK = re.compile(r"[\u4e00-\u9fff]")
#: A Chinese passage outside quotation marks: 8 or more characters, CJK punctuation inside.
PASSAGE = re.compile(r"[\u4e00-\u9fff][\u4e00-\u9fff\u3000-\u303f\uff00-\uffef0-9A-Za-z]{7,}")
CREDIT = re.compile(r"article|文章|\b00[012]\b|§", re.IGNORECASE)


def normal(text: str) -> str:
    """Letters and digits only, lower case: what survives the articles' lost punctuation."""
    text = unicodedata.normalize("NFKC", text).lower()
    return "".join(ch for ch in text if unicodedata.category(ch)[0] in "LN")


def articles(folder: Path) -> dict[str, str]:
    found = {p.name[:3]: normal(p.read_text(encoding="utf-8")) for p in folder.glob("00?_*.txt")}
    if sorted(found) != ["000", "001", "002"]:
        raise SystemExit(f"{folder} should hold 000_*.txt, 001_*.txt and 002_*.txt")
    return found


def own_text() -> str:
    """agentnb's own words: the package's source and data, normalised once."""
    parts = [p.read_text(encoding="utf-8") for p in (ROOT / "agentnb").rglob("*.py")]
    for pattern in ("*.csv", "*.jsonl", "*.json", "*.md"):
        parts += [p.read_text(encoding="utf-8") for p in (ROOT / "data").rglob(pattern)]
    return normal("\n".join(parts))


def headings() -> set[str]:
    """Every notebook heading: the README refers to sections by them, in quotation marks."""
    found = set()
    for path in (ROOT / "notebooks").glob("*.ipynb"):
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            if cell["cell_type"] == "markdown":
                lines = "".join(cell["source"]).splitlines()
                found |= {line.lstrip("#").strip() for line in lines if line.startswith("#")}
    return found


def found_in(quote: str, text: str) -> bool:
    """Every part of the quote (split at an ellipsis) in ``text``, in order."""
    at = 0
    for part in re.split(r"…|\.\.\.", quote):
        key = normal(part)
        if key:
            at = text.find(key, at)
            if at < 0:
                return False
            at += len(key)
    return True


def credits_an_article(before: str) -> bool:
    """Does the sentence leading to a quote name an article (outside `code`)?"""
    sentence = re.split(r"\n\n|[.!?。](?:\s|$)", before)[-1]
    return bool(CREDIT.search(re.sub(r"`[^`]*`", "", sentence)))


def prose(path: Path) -> list[tuple[str, str, str]]:
    """(where, prose, code) per notebook cell group: a notebook's markdown, or a whole .md file."""
    if path.suffix == ".md":
        return [(str(path.relative_to(ROOT)), path.read_text(encoding="utf-8"), "")]
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
    return [
        (f"{path.relative_to(ROOT)} cell {i}", "".join(c["source"]), code)
        for i, c in enumerate(cells)
        if c["cell_type"] == "markdown"
    ]


def check_map(texts: dict[str, str]) -> list[str]:
    bad = []
    with (ROOT / "docs" / "article_map.csv").open(encoding="utf-8") as f:
        for row in csv.DictReader(f):
            if normal(row["anchor"]) not in texts[row["article"]]:
                item, article = row["item"], row["article"]
                bad.append(f"item {item}: anchor not in article {article}: {row['anchor']}")
    return bad


def check_quotes(texts: dict[str, str]) -> tuple[Counter[str], list[str]]:
    counts: Counter[str] = Counter()
    bad = []
    ours, titles = own_text(), headings()
    sources = [*sorted((ROOT / "notebooks").glob("*.ipynb")), ROOT / "notebooks" / "README.md"]
    sources += sorted((ROOT / "docs").glob("*.md"))
    for path in sources:
        for where, text, code in prose(path):
            for match in QUOTED.finditer(text):
                quote = next(g for g in match.groups() if g)
                if not CJK.search(quote):
                    continue
                before = text[max(0, match.start() - 300) : match.start()]
                if quote in titles:
                    counts["quoted: a notebook heading named in a README table"] += 1
                elif any(found_in(quote, body) for body in texts.values()):
                    counts["quoted: verbatim from an article"] += 1
                elif found_in(quote, normal(code)) or found_in(quote, ours):
                    if credits_an_article(before):
                        counts["quoted: agentnb's text, credited to an article"] += 1
                        bad.append(f"{where}: credited to an article, but agentnb's text: {quote}")
                    else:
                        counts["quoted: agentnb's own text (requests, instructions, answers)"] += 1
                else:
                    counts["quoted: in no article and not agentnb's"] += 1
                    bad.append(f"{where}: in no article and not agentnb's: {quote}")
        for where, text, _ in prose(path):
            bare = QUOTED.sub(" ", re.sub(r"`[^`]*`", " ", text))
            for match in PASSAGE.finditer(bare):
                if not credits_an_article(bare[max(0, match.start() - 300) : match.start()]):
                    continue
                if any(found_in(match.group(), body) for body in texts.values()):
                    counts["unquoted, credited to an article: in it"] += 1
                else:
                    counts["unquoted, credited to an article: not in it"] += 1
                    bad.append(f"{where}: credited to an article, not in it: {match.group()}")
    return counts, bad


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__)
        return 2
    texts = articles(Path(argv[0]))
    with (ROOT / "docs" / "article_map.csv").open(encoding="utf-8") as f:
        items = sum(1 for _ in csv.DictReader(f))
    map_problems = check_map(texts)
    print(f"article map: {items - len(map_problems)} of {items} anchors found in their article")
    counts, quote_problems = check_quotes(texts)
    for what, n in sorted(counts.items()):
        print(f"Chinese passages in the prose, {what}: {n}")
    for line in map_problems + quote_problems:
        print("  " + line)
    return 1 if map_problems or quote_problems else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
