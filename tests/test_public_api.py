"""The public API is curated: names may not leak or disappear unnoticed."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import agentnb as an

PACKAGE = Path(an.__file__).parent

PUBLIC = [
    "ERROR_KINDS",
    "STAGES",
    "STOP_REASONS",
    "Agent",
    "AgentnbError",
    "AssistantMessage",
    "CassetteMiss",
    "ConfigurationError",
    "ContextPolicy",
    "DeterministicSummariser",
    "DropOldest",
    "Evaluation",
    "HeuristicTokenizer",
    "InvalidConversation",
    "InvalidMessage",
    "KeepAll",
    "KeepLastTurns",
    "Memory",
    "MemoryStore",
    "ModelCallFailed",
    "ModelError",
    "ModelHTTPError",
    "ModelResponseError",
    "ModelStreamError",
    "ModelSummariser",
    "QueueFull",
    "Run",
    "RunResult",
    "RunStateError",
    "RunView",
    "Runtime",
    "SQLiteStore",
    "ScriptNotConsumed",
    "Session",
    "SessionBusy",
    "SessionConflict",
    "SessionNotFound",
    "Store",
    "StoreError",
    "SummariseOldest",
    "SystemMessage",
    "Task",
    "TaskInfo",
    "TaskNotFound",
    "TaskSet",
    "Tokenizer",
    "Tool",
    "ToolCall",
    "ToolDefinitionError",
    "ToolError",
    "ToolMessage",
    "ToolRecording",
    "Toolset",
    "Trace",
    "TraceFormatError",
    "UnexpectedModelCall",
    "User",
    "UserMessage",
    "__version__",
    "checks",
    "evals",
    "evaluate",
    "events",
    "log",
    "models",
    "observe",
    "optimize",
    "parse_message",
    "provenance",
    "testing",
    "tool",
    "travel",
]


def _public_order(name: str) -> tuple[int, str]:
    """Constants, then classes, then functions and modules; each group alphabetical."""
    return (0 if name.isupper() else 1 if name[0].isupper() else 2, name)


def test_all_is_pinned_and_sorted():
    assert an.__all__ == PUBLIC
    assert an.__all__ == sorted(an.__all__, key=_public_order)
    for name in an.__all__:
        assert getattr(an, name) is not None


def test_public_classes_show_their_public_path():
    for name in an.__all__:
        obj = getattr(an, name)
        if isinstance(obj, type):
            assert obj.__module__ == "agentnb", name


def test_every_error_is_an_agentnb_error_with_a_message():
    for name in an.__all__:
        obj = getattr(an, name)
        if isinstance(obj, type) and issubclass(obj, Exception) and obj is not an.ToolError:
            assert issubclass(obj, an.AgentnbError), name
    assert str(an.ModelError("what went wrong")) == "what went wrong"


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
    return found


def test_runtime_never_imports_jupyter_statically():
    jupyter = {"IPython", "ipywidgets", "anywidget", "ipykernel", "jupyter_client", "traitlets"}
    for path in PACKAGE.rglob("*.py"):
        if "widgets" in path.relative_to(PACKAGE).parts:
            continue
        assert not (_imports(path) & jupyter), path


def test_runtime_never_imports_jupyter_when_running():
    code = (
        "import sys, asyncio, agentnb as an\n"
        "agent = an.travel.travel_agent()\n"
        "r = agent.run_sync('我周五从上海去北京出差，预算3000以内')\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in "
        "{'IPython', 'ipywidgets', 'anywidget', 'ipykernel', 'traitlets'})\n"
        "print(r.stop_reason, bad)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "final_answer []", out.stderr
