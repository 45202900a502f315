"""Log levels through stdlib logging, read with a capturing handler."""

from __future__ import annotations

import json
import logging

import openai
import pytest

import agentnb as an
from tests.observe.observe_helpers import KEY
from tests.servers.fault_server import Step

REQUEST = "我周五从上海去北京出差，帮我看看航班和天气"


class Capture(logging.Handler):
    def __init__(self):
        super().__init__(logging.NOTSET)
        self.records: list[logging.LogRecord] = []

    def emit(self, record):
        self.records.append(record)


@pytest.fixture
def capture():
    handler = Capture()
    logger = logging.getLogger("agentnb")
    logger.addHandler(handler)
    yield handler
    an.log(None)
    logger.removeHandler(handler)


def _broken_arguments_agent():
    model = an.models.ScriptedModel(
        [
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "search_weather", "arguments": "{city: 北京"},
                    }
                ],
            },
            {"role": "assistant", "content": "对不起"},
        ]
    )
    return an.travel.travel_agent(model=model)


def test_nothing_is_logged_by_default(capture):
    logger = logging.getLogger("agentnb")
    assert logger.getEffectiveLevel() == logging.WARNING  # the default: warnings only
    an.travel.travel_agent().run_sync(REQUEST)
    _broken_arguments_agent().run_sync(REQUEST)  # even failures: nothing until an.log
    assert capture.records == []


def test_summary_is_one_line_per_run_with_ids(capture):
    an.log("summary", handler=False)
    first = an.travel.travel_agent().run_sync(REQUEST)
    second = an.travel.travel_agent().run_sync("周五北京天气")
    assert [r.levelno for r in capture.records] == [logging.INFO, logging.INFO]
    for record, result in zip(capture.records, (first, second), strict=True):
        assert (record.session_id, record.run_id, record.trace_id) == (
            result.session.id,
            result.run_id,
            result.trace_id,
        )
        assert record.stop_reason == result.stop_reason == "final_answer"
        assert record.steps == result.iterations and record.tokens == result.usage.total_tokens
        assert 0 < record.latency < 30
        text = record.getMessage()
        assert f"final_answer after {result.iterations} steps" in text and "tokens" in text


def test_trace_logs_every_event_with_the_full_request_and_response(capture):
    an.log("trace", handler=False)
    result = an.travel.travel_agent().run_sync(REQUEST)
    debug = [r for r in capture.records if r.levelno == logging.DEBUG]
    assert [r.event for r in debug] == [e.type for e in result.events]
    assert [r.seq for r in debug] == [e.seq for e in result.events]
    assert {r.run_id for r in capture.records} == {result.run_id}
    requests = [r.getMessage() for r in debug if r.event == "RequestAssembled"]
    assert len(requests) == result.iterations
    body = json.loads(requests[-1].split("\n", 1)[1])  # the summary, then the JSON
    assert [m["role"] for m in body["messages"]][:2] == ["system", "user"]
    assert body["messages"][1]["content"] == REQUEST and body["tools"]
    replies = [r.getMessage() for r in debug if r.event == "ModelResponded"]
    assert result.output in json.loads(replies[-1].split("\n", 1)[1])["message"]["content"]
    assert sum(r.levelno == logging.INFO for r in capture.records) == 1  # trace includes summary


def test_error_logs_failures_with_the_exception_and_the_raw_output(capture):
    an.log("error", handler=False)
    an.travel.travel_agent().run_sync(REQUEST)
    assert capture.records == []  # a successful run logs nothing at error
    result = _broken_arguments_agent().run_sync(REQUEST)
    (record,) = capture.records
    assert record.levelno == logging.ERROR and record.event == "ToolFinished"
    assert record.raw_output == "{city: 北京"  # what the model wrote
    assert "invalid_json" in record.getMessage() and record.exception
    assert record.run_id == result.run_id
    capture.records.clear()
    failing = an.models.FunctionModel(lambda request: 1 / 0, name="zero")
    with pytest.raises(an.ModelCallFailed):
        an.Agent("t", [], model=failing).run_sync("go")
    (record,) = capture.records
    assert record.event == "RunStopped" and "ZeroDivisionError" in record.exception


def test_proxied_calls_are_logged_and_keys_never(capture, fault_server):
    an.log("trace", handler=False)
    fault_server.script(Step(status=401, body={"error": {"message": f"bad key {KEY}"}}))
    with (
        an.observe.proxy(upstream=fault_server.base_url) as proxy,
        openai.OpenAI(base_url=proxy.base_url, api_key=KEY, max_retries=0) as app,
        pytest.raises(openai.AuthenticationError),
    ):
        app.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
    errors = [r for r in capture.records if r.levelno == logging.ERROR]
    assert [r.event for r in errors] == ["UpstreamFailed", "RunStopped"]
    assert "401" in errors[0].getMessage() and errors[0].session_id == proxy.sessions[0].id
    formatter = logging.Formatter("%(message)s %(session_id)s %(exception)s")
    for record in capture.records:
        assert KEY not in record.getMessage()
        assert KEY not in json.dumps(record.__dict__, default=str)
    assert KEY not in "".join(formatter.format(r) for r in errors)


def test_an_unknown_level_is_refused():
    with pytest.raises(ValueError, match="trace"):
        an.log("verbose")
