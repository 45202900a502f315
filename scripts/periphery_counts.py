"""The counts of issue 35's note, read from the source of a checkout of agentnb.

    .venv/bin/python scripts/periphery_counts.py                  # this checkout
    git archive 456891b agentnb | tar -x -C /tmp/before
    .venv/bin/python scripts/periphery_counts.py /tmp/before       # another tree, to compare

Each count is a rule over the source, printed with the sites it found so a reader can check
it (``--sites``); none imports the tree it counts except the last, which imports ``agentnb``
from the given root in a fresh interpreter.

* **lines per folder** of ``agentnb/`` (``.py`` files; the top-level modules as ``(top)``).
* **homes of a run's outcome**: classes (outside ``events.py``, whose events are what a
  record is made from, and ``_fast.py``'s loop steps) that store a field named
  ``stop_reason`` or ``outcome`` (an annotated class attribute or ``self.<name> =``), and SQL
  tables with such a column.
* **homes of usage**: classes (outside ``events.py`` and ``models/``, whose ``Usage`` and
  replies are what is counted, and the transcript's token *estimates* in ``messages.py`` and
  ``session/transcript.py``) that store a ``Usage`` or a ``prompt_tokens`` /
  ``completion_tokens`` / ``tokens`` field, and SQL tables with a ``tokens`` column.
* **id minting sites**: where a run id or a trace id is made from randomness: a function
  named ``*run_id*`` / ``*trace_id*`` that calls ``os.urandom`` / ``uuid`` / ``secrets``, or a
  line that assigns ``run_id`` / ``trace_id`` from one.
* **service job kinds**: durable workflows registered (``DBOS.workflow(...)``) in
  ``service/`` and ``evals/``, and job tables (``CREATE TABLE`` of tasks or sweep runs).
* **ways to answer a model call from a recording**: in the modules of recordings
  (``models/recorded.py``, ``models/replay.py``, ``evals/cache.py``, ``evals/replay.py``), the
  classes that answer a call (a ``complete`` method, or an httpx transport's
  ``handle_async_request``), and the reply formats: functions that read a stored reply into a
  ``ModelResponse`` (``reply_of`` and kin).
* **public objects a core user meets**: ``len(agentnb.__all__)`` plus the ``__all__`` of each
  core subpackage (models, tools, runtime, session, storage, context).
"""

from __future__ import annotations

import argparse
import ast
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

CORE = ("models", "tools", "runtime", "session", "storage", "context")
RECORDINGS = ("models/recorded.py", "models/replay.py", "evals/cache.py", "evals/replay.py")
RANDOM = re.compile(r"os\.urandom\(|uuid\.uuid\d\(|uuid\d\(|secrets\.token_\w+\(")


def modules(root: Path) -> dict[str, str]:
    package = root / "agentnb"
    files = package.rglob("*.py")
    return {str(p.relative_to(package)): p.read_text(encoding="utf-8") for p in files}


def lines_per_folder(sources: dict[str, str]) -> Counter[str]:
    out: Counter[str] = Counter()
    for rel, text in sources.items():
        folder = rel.split("/")[0] if "/" in rel else "(top)"
        out[folder] += len(text.splitlines())
    return out


def _fields(cls: ast.ClassDef) -> dict[str, str]:
    """Field name -> its annotation (or "") a class stores: annotated class attributes (a
    dataclass's fields) and ``self.<name> =`` (a property or an ``__init__`` parameter that
    is not stored is a view, not a home)."""
    found: dict[str, str] = {}
    for node in ast.walk(cls):
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            found[node.target.id] = ast.unparse(node.annotation)
        elif (
            isinstance(node, ast.Attribute)
            and isinstance(node.ctx, ast.Store)
            and isinstance(node.value, ast.Name)
            and node.value.id == "self"
        ):
            found.setdefault(node.attr, "")
    return found


def _tables(rel: str, text: str, columns: tuple[str, ...]) -> list[str]:
    out = []
    for match in re.finditer(r"CREATE TABLE IF NOT EXISTS (\{?\w+\}?\w*) \(([^;]*?)\)\s*\"", text):
        body = match.group(2)
        if any(re.search(rf"\b{c}\b", body) for c in columns):
            out.append(f"{rel}: table {match.group(1)}")
    return out


def homes(sources: dict[str, str], names: tuple[str, ...], skip: tuple[str, ...],
          usage: bool = False) -> list[str]:  # fmt: skip
    out = []
    for rel, text in sorted(sources.items()):
        if rel.startswith(skip):
            continue
        for node in ast.walk(ast.parse(text)):
            if not isinstance(node, ast.ClassDef):
                continue
            fields = _fields(node)
            kept = sorted(
                n for n, ann in fields.items() if n in names or (usage and ann.startswith("Usage"))
            )
            if kept:
                out.append(f"{rel}: class {node.name} ({', '.join(kept)})")
        out += _tables(rel, text, names)
    return out


def minting(sources: dict[str, str]) -> list[str]:
    out = []
    for rel, text in sorted(sources.items()):
        tree = ast.parse(text)
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.FunctionDef)
                and re.search(r"(run|trace)_id", node.name)
                and RANDOM.search(ast.unparse(node))
            ):
                out.append(f"{rel}: def {node.name}")
        for n, line in enumerate(text.splitlines(), 1):
            if re.search(r"\b(run_id|trace_id)\b\s*[:=]", line) and RANDOM.search(line):
                out.append(f"{rel}:{n}: {line.strip()}")
    return out


def job_kinds(sources: dict[str, str]) -> list[str]:
    out = []
    for rel, text in sorted(sources.items()):
        if not rel.startswith(("service/", "evals/")):
            continue
        for n, line in enumerate(text.splitlines(), 1):
            if re.search(r"DBOS\.workflow\(", line):
                out.append(f"{rel}:{n}: workflow {line.strip()}")
        for match in re.finditer(r"CREATE TABLE IF NOT EXISTS (\w*(tasks|sweep_runs))\b", text):
            out.append(f"{rel}: job table {match.group(1)}")
    return out


def recordings(sources: dict[str, str]) -> list[str]:
    out = []
    for rel, text in sorted(sources.items()):
        if rel not in RECORDINGS:
            continue
        tree = ast.parse(text)
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                names = {f.name for f in node.body if isinstance(f, ast.AsyncFunctionDef)}
                transport = any("Transport" in ast.unparse(b) for b in node.bases)
                if "complete" in names or (transport and "handle_async_request" in names):
                    out.append(f"{rel}: answers from a recording: class {node.name}")
            if (
                isinstance(node, ast.FunctionDef)
                and node.returns is not None
                and "ModelResponse" in ast.unparse(node.returns)
                and re.search(r"(^|_)(reply|response)_(of|from)|_read_reply", node.name)
            ):
                out.append(f"{rel}: a reply format's reader: def {node.name}")
    return out


def public_objects(root: Path) -> dict[str, int]:
    code = (
        "import importlib, json, sys\n"
        f"sys.path.insert(0, {str(root)!r})\n"
        "import agentnb\n"
        "assert agentnb.__file__.startswith(sys.path[0]), agentnb.__file__\n"
        "out = {'agentnb': len(agentnb.__all__)}\n"
        f"for name in {CORE!r}:\n"
        "    out[name] = len(importlib.import_module('agentnb.' + name).__all__)\n"
        "print(json.dumps(out))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd="/"
    )
    import json

    return dict(json.loads(done.stdout))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("root", nargs="?", default=str(Path(__file__).parents[1]))
    parser.add_argument("--sites", action="store_true", help="print every site counted")
    args = parser.parse_args(argv)
    root = Path(args.root).resolve()
    sources = modules(root)
    folders = lines_per_folder(sources)
    print(f"agentnb/ at {root}: {sum(folders.values())} lines")
    for folder, n in sorted(folders.items(), key=lambda kv: -kv[1]):
        print(f"  {folder:<12} {n:>6}")
    counts = {
        "homes of a run's outcome": homes(
            sources, ("stop_reason", "outcome"), ("events.py", "_fast.py")
        ),
        "homes of usage": homes(
            sources,
            ("prompt_tokens", "completion_tokens", "tokens"),
            ("events.py", "models/", "messages.py", "session/transcript.py"),
            usage=True,
        ),
        "id minting sites (run and trace ids)": minting(sources),
        "service job kinds (workflows; job tables)": job_kinds(sources),
        "answering a model call from a recording": recordings(sources),
    }
    for name, sites in counts.items():
        print(f"{name}: {len(sites)}")
        if args.sites:
            print("".join(f"    {s}\n" for s in sites), end="")
    public = public_objects(root)
    parts = " + ".join(f"{k} {v}" for k, v in public.items())
    print(f"public objects a core user meets: {sum(public.values())} ({parts})")


if __name__ == "__main__":
    main()
