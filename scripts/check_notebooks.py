"""Notebooks are code: committed without outputs, and with the metadata JupyterLab writes.

python scripts/check_notebooks.py          # fail, naming each notebook that is not clean
python scripts/check_notebooks.py --strip  # clean them in place (what `make strip` does)

Clean means: no outputs or execution counts, and notebook metadata exactly ``METADATA``.
JupyterLab rewrites ``kernelspec`` and ``language_info`` when a kernel starts; a notebook
whose metadata differs from what it writes opens marked "modified" (measured in Chromium,
JupyterLab 4.6: only the full ``language_info``, Python version included, left it clean).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

#: What JupyterLab writes for the `python3` kernel of `make lab`'s venv (ipykernel, Python
#: 3.11.7 on the machine the curriculum is tested on). Another patch release of Python marks
#: a notebook modified on open in Lab; `make strip` sets this back before a commit.
METADATA: dict[str, Any] = {
    "kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"},
    "language_info": {
        "codemirror_mode": {"name": "ipython", "version": 3},
        "file_extension": ".py",
        "mimetype": "text/x-python",
        "name": "python",
        "nbconvert_exporter": "python",
        "pygments_lexer": "ipython3",
        "version": "3.11.7",
    },
}


def dirty_cells(nb: dict[str, Any]) -> int:
    return sum(
        1
        for c in nb.get("cells", [])
        if c.get("cell_type") == "code" and (c.get("outputs") or c.get("execution_count"))
    )


def problems(nb: dict[str, Any]) -> list[str]:
    found = []
    count = dirty_cells(nb)
    if count:
        found.append(f"{count} cells with outputs")
    if nb.get("metadata") != METADATA:
        found.append("notebook metadata is not what JupyterLab writes (kernelspec, language_info)")
    return found


def clean(nb: dict[str, Any]) -> None:
    for cell in nb["cells"]:
        if cell.get("cell_type") == "code":
            cell["outputs"], cell["execution_count"] = [], None
    nb["metadata"] = json.loads(json.dumps(METADATA))


def main(argv: list[str]) -> int:
    strip = "--strip" in argv
    bad = []
    paths = sorted((ROOT / "notebooks").glob("*.ipynb"))
    for path in paths:
        nb = json.loads(path.read_text(encoding="utf-8"))
        found = problems(nb)
        if not found:
            continue
        if strip:
            clean(nb)
            path.write_text(json.dumps(nb, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
            print(f"cleaned {path.relative_to(ROOT)} ({'; '.join(found)})")
        else:
            bad.append(f"  {path.relative_to(ROOT)}: {'; '.join(found)}")
    if bad:
        print("Notebooks must be committed clean (run `make strip`):")
        print("\n".join(bad))
        return 1
    print(f"{len(paths)} notebooks, no outputs committed, metadata as JupyterLab writes it")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
