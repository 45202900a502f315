"""Retries over httpx.MockTransport: which failures retry, how long they wait, what is raised."""

from __future__ import annotations

import httpx
import pytest

from agentnb.errors import ModelHTTPError
from agentnb.models import ModelRequest, RetryPolicy
from agentnb.models.openai.retry import retry_after_seconds
from tests.models.openai_helpers import KEY, Recorder, completion, model_for

REQ = ModelRequest([{"role": "user", "content": "hi"}])
OK = completion({"role": "assistant", "content": "ok"})


def scripted(*answers):
    """A handler answering in order: an httpx.Response, or an exception to raise."""
    calls = []

    def handler(request):
        answer = answers[min(len(calls), len(answers) - 1)]
        calls.append(request)
        if isinstance(answer, Exception):
            raise answer
        return answer

    return handler, calls


async def test_429_honours_retry_after_then_succeeds():
    handler, calls = scripted(
        httpx.Response(429, headers={"Retry-After": "2"}, text="slow down"),
        httpx.Response(503, headers={"retry-after-ms": "250"}),
        httpx.Response(200, json=OK),
    )
    sleep = Recorder()
    response = await model_for(handler, sleep=sleep).complete(REQ)
    assert response.message.text == "ok" and len(calls) == 3
    assert sleep.waits == [2.0, 0.25]


async def test_5xx_backs_off_exponentially_with_jitter_within_bounds():
    handler, _calls = scripted(
        httpx.Response(500), httpx.Response(502), httpx.Response(504), httpx.Response(200, json=OK)
    )
    sleep = Recorder()
    policy = RetryPolicy(attempts=4, initial=0.5, max_wait=20, jitter=0.5, sleep=sleep)
    await model_for(handler, retry=policy).complete(REQ)
    assert len(sleep.waits) == 3
    for wait, base in zip(sleep.waits, (0.5, 1.0, 2.0), strict=True):
        assert base <= wait <= base + 0.5


async def test_persistent_failure_raises_a_typed_error_with_status_body_and_request_id():
    body = "upstream exploded " * 100 + KEY
    handler, calls = scripted(httpx.Response(503, text=body, headers={"x-request-id": "req-42"}))
    with pytest.raises(ModelHTTPError) as info:
        await model_for(handler).complete(REQ)
    err = info.value
    assert (err.status, err.attempts, err.request_id) == (503, 4, "req-42")
    assert len(calls) == 4
    assert len(err.body) <= 500 and KEY not in str(err) and KEY not in err.body
    assert "HTTP 503 after 4 attempts" in str(err) and "req-42" in str(err)


@pytest.mark.parametrize("status", [400, 401, 404, 422])
async def test_client_errors_are_not_retried(status):
    handler, calls = scripted(httpx.Response(status, json={"error": {"message": "bad"}}))
    with pytest.raises(ModelHTTPError) as info:
        await model_for(handler).complete(REQ)
    assert info.value.status == status and info.value.attempts == 1 and len(calls) == 1
    if status == 401:
        assert "check the API key" in str(info.value)


async def test_connection_errors_and_timeouts_retry_then_raise_with_no_status():
    handler, calls = scripted(
        httpx.ConnectError("refused"), httpx.ReadTimeout("slow"), httpx.ConnectError("refused")
    )
    with pytest.raises(ModelHTTPError) as info:
        await model_for(handler, retry=RetryPolicy(attempts=3, sleep=Recorder())).complete(REQ)
    assert info.value.status is None and info.value.attempts == 3 and len(calls) == 3
    assert "could not complete after 3 attempts: refused" in str(info.value)


async def test_a_timeout_on_the_last_try_says_so():
    handler, _ = scripted(httpx.ReadTimeout("slow"))
    with pytest.raises(ModelHTTPError, match=r"timed out \(ReadTimeout\) after 2 attempts"):
        await model_for(handler, retry=RetryPolicy(attempts=2, sleep=Recorder())).complete(REQ)


async def test_a_retry_after_longer_than_allowed_fails_at_once_instead_of_hanging():
    handler, calls = scripted(httpx.Response(429, headers={"Retry-After": "3600"}))
    sleep = Recorder()
    with pytest.raises(ModelHTTPError, match="asked to wait 3600 s"):
        await model_for(handler, sleep=sleep).complete(REQ)
    assert len(calls) == 1 and sleep.waits == []


async def test_the_budget_bounds_the_total_wait():
    handler, _calls = scripted(httpx.Response(429, headers={"Retry-After": "20"}))
    sleep = Recorder()
    policy = RetryPolicy(attempts=10, budget=30, sleep=sleep)
    with pytest.raises(ModelHTTPError):
        await model_for(handler, retry=policy).complete(REQ)
    assert sleep.waits == [20.0], "a second 20 s wait would pass the 30 s budget"


async def test_attempts_1_never_retries():
    handler, calls = scripted(httpx.Response(500))
    with pytest.raises(ModelHTTPError):
        await model_for(handler, retry=RetryPolicy(attempts=1)).complete(REQ)
    assert len(calls) == 1


def test_retry_after_forms():
    assert retry_after_seconds(httpx.Headers({"Retry-After": "1.5"})) == 1.5
    assert (
        retry_after_seconds(httpx.Headers({"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"})) == 0.0
    )
    assert retry_after_seconds(httpx.Headers({"Retry-After": "soon"})) is None
    assert retry_after_seconds(httpx.Headers({})) is None
