"""How long each notebook takes in the environment `make lab` creates: wall and CPU seconds.

    .venv/bin/python scripts/notebook_times.py [NN ...] [--keep DIR]

Builds (or reuses) the lab environment the notebook tier uses (tests/notebooks/labenv.py:
`-e .[notebooks]`, no `local` extra), executes each notebook there with nbconvert, as a
learner's "Run All" would, and prints the times, heaviest first. CPU time is the kernel's and
nbconvert's (children's user + system), so a loaded machine shows in wall time, not in CPU.
``--keep DIR`` keeps the executed notebooks there (to read their outputs; never commit them).
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.notebooks.labenv import lab_env  # noqa: E402


def cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main(only: list[str], keep: str | None = None) -> int:
    python = lab_env()
    names = sorted(p for p in (ROOT / "notebooks").glob("*.ipynb"))
    names = [p for p in names if not only or p.name[:2] in only]
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        out = keep or scratch
        for path in names:
            wall, used = time.perf_counter(), cpu()
            done = subprocess.run(
                [str(python), "-m", "jupyter", "nbconvert", "--to", "notebook", "--execute",
                 "--output-dir", out, "--ExecutePreprocessor.timeout=600", str(path)],
                cwd=ROOT / "notebooks", capture_output=True, text=True,
            )  # fmt: skip
            rows.append((time.perf_counter() - wall, cpu() - used, path.name, done.returncode))
            print(f"{path.name}: {rows[-1][0]:.1f} s", file=sys.stderr, flush=True)
    print(f"{'notebook':36} {'wall s':>7} {'CPU s':>7}  exit")
    for wall, used, name, code in sorted(rows, reverse=True):
        print(f"{name:36} {wall:7.1f} {used:7.1f}  {code}")
    return max((r[3] for r in rows), default=0)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("only", nargs="*", help="notebook numbers (00 ... 21); all when none")
    parser.add_argument("--keep", help="a folder to keep the executed notebooks in")
    args = parser.parse_args()
    if args.keep:
        Path(args.keep).mkdir(parents=True, exist_ok=True)
    sys.exit(main(args.only, args.keep))
