"""Notebooks are code: committed without outputs or execution counts.

python scripts/check_notebooks.py          # fail, naming each notebook that has outputs
python scripts/check_notebooks.py --strip  # remove them in place (what `make strip` does)
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def dirty_cells(nb: dict) -> int:
    return sum(
        1
        for c in nb.get("cells", [])
        if c.get("cell_type") == "code" and (c.get("outputs") or c.get("execution_count"))
    )


def main(argv: list[str]) -> int:
    strip = "--strip" in argv
    bad = []
    paths = sorted((ROOT / "notebooks").glob("*.ipynb"))
    for path in paths:
        nb = json.loads(path.read_text(encoding="utf-8"))
        count = dirty_cells(nb)
        if not count:
            continue
        if strip:
            for cell in nb["cells"]:
                if cell.get("cell_type") == "code":
                    cell["outputs"], cell["execution_count"] = [], None
            path.write_text(json.dumps(nb, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
            print(f"stripped {path.relative_to(ROOT)} ({count} cells)")
        else:
            bad.append(f"  {path.relative_to(ROOT)}: {count} cells with outputs")
    if bad:
        print("Notebooks must be committed without outputs (run `make strip`):")
        print("\n".join(bad))
        return 1
    print(f"{len(paths)} notebooks, no outputs committed")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
