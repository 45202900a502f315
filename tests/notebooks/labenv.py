"""Building the environment `make lab` creates (see conftest.py)."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RUNNER = ["nbmake>=1.5", "pytest>=8"]  # to run the notebooks; not part of `make lab`
STALE = 7 * 86400  # seconds: a lab env not used for a week is removed when another is built


def _uv() -> list[str]:
    here = Path(sys.executable).parent / "uv"
    if here.exists():
        return [str(here)]
    found = shutil.which("uv")
    return [found] if found else [sys.executable, "-m", "uv"]


def lab_env() -> Path:
    """The python of a venv holding ``-e .[notebooks]`` + nbmake, built when pyproject changes."""
    key = hashlib.sha256(
        str(ROOT).encode() + (ROOT / "pyproject.toml").read_bytes() + " ".join(RUNNER).encode()
    ).hexdigest()[:12]
    base = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "agentnb" / "lab-env"
    env = base / key
    python = env / "bin" / "python"
    if (env / ".complete").exists() and python.exists():
        (env / ".complete").touch()  # in use: not stale
        return python
    shutil.rmtree(env, ignore_errors=True)
    base.mkdir(parents=True, exist_ok=True)
    for old in base.iterdir():  # envs of gone checkouts or older pyprojects, unused for a week
        mark = old / ".complete"
        if mark.exists() and time.time() - mark.stat().st_mtime > STALE:
            shutil.rmtree(old, ignore_errors=True)
    run = {"check": True, "capture_output": True, "text": True}
    try:
        subprocess.run([*_uv(), "venv", "--quiet", "--python", sys.executable, str(env)], **run)
        install = [*_uv(), "pip", "install", "--quiet", "--compile-bytecode"]
        subprocess.run(
            [*install, "--python", str(python), "-e", f"{ROOT}[notebooks]", *RUNNER], **run
        )
        # as `make lab` installs it: bytecode compiled (the package's own, editable, too)
        subprocess.run([str(python), "-m", "compileall", "-q", str(ROOT / "agentnb")], **run)
    except subprocess.CalledProcessError as exc:
        shutil.rmtree(env, ignore_errors=True)
        pytest.fail(f"could not build the lab environment: {exc.stderr[-2000:]}")
    (env / "pytest.ini").write_text("[pytest]\n")  # not the repo's: its options need dev plugins
    profile = env / "ipython" / "profile_default"
    profile.mkdir(parents=True, exist_ok=True)  # tracebacks in plain text (FACTS.md)
    (profile / "ipython_config.py").write_text('c.InteractiveShell.colors = "nocolor"\n')
    (env / ".complete").write_text("ok\n")
    return python


def plain_env() -> dict[str, str]:
    """The user's environment without the switches that pick another model or venv."""
    drop = ("AGENTNB_", "VIRTUAL_ENV", "PYTHONPATH", "JPY_", "JUPYTER_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    env["PYTHONHASHSEED"] = "0"
    return env


def ipython_dir(python: Path) -> str:
    return str(python.parents[1] / "ipython")
