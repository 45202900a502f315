"""Tool results: the one reader of the structured failure shape (issue 23: two parsers were
one too many), and what a result may weigh."""

from __future__ import annotations

import json

import pytest

from agentnb.evals.batches import calls
from agentnb.messages import ToolMessage
from agentnb.tools.results import error_content, error_kind, read_error


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
    assert calls(wire)[0].kind == kind  # the evaluation reads it the same way


def test_a_deeply_nested_result_is_a_result_not_a_crash():
    """A tool that returns JSON nested 100,000 deep: json.loads raises RecursionError, which
    the readers did not catch (``ToolMessage.error`` raised; the run's memory and checks
    read it). It is not agentnb's failure shape, so it is a result."""
    content = '{"x": ' + "[" * 100_000
    assert read_error(content) is None
    assert ToolMessage(tool_call_id="c", content=content).ok
    assert json.loads(error_content("x")) == {"ok": False, "kind": "tool_error", "error": "x"}
