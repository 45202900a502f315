"""Tool results: the one reader of the structured failure shape (issue 23: two parsers were
one too many), and what a result may weigh."""

from __future__ import annotations

import json
from typing import Any

import pytest

import agentnb as an
from agentnb.evals.batches import calls as trajectory
from agentnb.events import ToolFinished
from agentnb.messages import ToolMessage
from agentnb.tools.results import MAX_RESULT_CHARS, error_content, error_kind, read_error
from tests.helpers import call, calls


@pytest.mark.parametrize(
    ("content", "kind"),
    [
        (error_content("no seats", "try tomorrow", kind="tool_error"), "tool_error"),
        (error_content("slow", kind="timeout"), "timeout"),
        ('{"ok": false, "error": "a failure that names no kind"}', "tool_error"),
        ('{"ok": true, "price": 3}', None),
        ('{"ok": 0}', None),  # only false is a failure
        ("[1, 2]", None),
        ("plain text {", None),
        ("{not json", None),
        ("", None),
    ],
)
def test_one_reader_for_the_failure_shape(content, kind):
    assert error_kind(content) == kind
    assert ToolMessage(tool_call_id="c", content=content).kind == kind
    wire = [
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"id": "c", "type": "function", "function": {"name": "t", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "c", "content": content},
    ]
    assert trajectory(wire)[0].kind == kind  # the evaluation reads it the same way


def test_a_deeply_nested_result_is_a_result_not_a_crash():
    """A tool that returns JSON nested 100,000 deep: json.loads raises RecursionError, which
    the readers did not catch (``ToolMessage.error`` raised; the run's memory and checks
    read it). It is not agentnb's failure shape, so it is a result."""
    content = '{"x": ' + "[" * 100_000
    assert read_error(content) is None
    assert ToolMessage(tool_call_id="c", content=content).ok
    assert json.loads(error_content("x")) == {"ok": False, "kind": "tool_error", "error": "x"}


# -- M10: what a result may weigh ----------------------------------------------------------


def _big_page() -> str:
    return "<p>" + "x" * (MAX_RESULT_CHARS * 3) + "</p>"


async def _one_call(tool: an.Tool) -> tuple[list[dict[str, Any]], Any, Any]:
    model = an.models.ScriptedModel(
        [calls(call("c1", tool.name)), {"role": "assistant", "content": "done"}]
    )
    result = await an.Agent(tools=[tool], model=model).run("go")
    finished = next(e for e in result.events if isinstance(e, ToolFinished))
    return result.session.to_openai(), finished, model


@pytest.mark.parametrize("kind", ["sync", "async"])
async def test_a_huge_result_is_cut_to_the_bound_and_says_so(kind):
    """A 300,000-character page went whole into the transcript and every later request."""
    if kind == "sync":
        tool = an.tool(_big_page, name="fetch_page")
    else:

        async def fetch_page() -> str:
            return _big_page()

        tool = an.tool(fetch_page)
    wire, finished, model = await _one_call(tool)
    result = wire[2]["content"]
    assert result.startswith("<p>xxx") and len(result) < MAX_RESULT_CHARS + 200
    assert result.endswith(
        f"[truncated by agentnb: the result had {MAX_RESULT_CHARS * 3 + 7:,} characters; "
        f"the first {MAX_RESULT_CHARS:,} are shown]"
    )
    assert finished.ok and "cut from 300,007 to 100,000 characters" in finished.note
    assert len(json.dumps(model.requests[1].messages[-1])) < MAX_RESULT_CHARS + 500


async def test_the_bound_is_per_tool_and_can_be_lifted():
    small = an.tool(lambda: {"rows": list(range(1000))}, name="rows", max_result_chars=50)
    wire, finished, _ = await _one_call(small)
    assert wire[2]["content"].startswith('{"rows": [0, 1, 2')
    assert "the first 50 are shown" in wire[2]["content"]
    lifted = an.tool(_big_page, name="fetch_page", max_result_chars=None)
    wire, finished, _ = await _one_call(lifted)
    assert len(wire[2]["content"]) == MAX_RESULT_CHARS * 3 + 7 and finished.note is None
    with pytest.raises(an.ToolDefinitionError, match="max_result_chars"):
        an.tool(_big_page, name="p", max_result_chars=0)


def test_a_huge_error_message_is_bounded_too():
    content = error_content("e" * (MAX_RESULT_CHARS * 2), "h" * (MAX_RESULT_CHARS * 2))
    body = json.loads(content)
    assert body["ok"] is False and len(content) < 2 * MAX_RESULT_CHARS + 500
    assert "truncated by agentnb" in body["error"] and "truncated by agentnb" in body["hint"]
