"""The view of a native API's session: the raw-JSON toggle names and measures what a message
keeps for its provider (a thinking block's signature, a reasoning item's encrypted_content),
as the reasoning fold does, never shows it verbatim; a session moved to another API says what
it did not send once per run, not on every call. The toggle's function is the shipped one,
run by node on the payload the view holds."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest

import agentnb as an
from agentnb.widgets import SessionView, base, payload

NODE = shutil.which("node")
QUESTION = "周五上海到北京，帮我看看天气和机票"


def _function(name: str) -> str:
    """A top-level function of the front end as shipped (``base.ESM``)."""
    found = re.search(rf"^function {name}\(.*?^}}\n", base.ESM, re.S | re.M)
    assert found, name
    return found.group(0)


def shown(wires: list[dict]) -> list[str]:
    """What the raw-JSON toggle shows for each message."""
    if NODE is None:
        pytest.skip("node is not installed")
    code = (
        _function("fmtInt")
        + _function("shownWire")
        + f"const ws = {json.dumps(wires, ensure_ascii=False)};"
        + "process.stdout.write(JSON.stringify(ws.map((w) => JSON.stringify(shownWire(w), null, 2))));"
    )
    done = subprocess.run([NODE, "-e", code], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


@pytest.mark.parametrize("api", ["anthropic", "responses"])
async def test_the_raw_json_names_what_is_kept_for_the_provider(comms, api):
    session = an.Session()
    view = SessionView(session)
    with an.observe.serve() as server:
        kind = an.models.AnthropicModel if api == "anthropic" else an.models.ResponsesModel
        model = kind("travel", base_url=server.base_url, api_key="k")
        await an.travel.travel_agent(model=model).run(QUESTION, session=session)
    wires = [m["w"] for m in payload.unpack(view.snapshot)["messages"]]
    assert wires == session.wire()
    replies = [w for w in wires if w["role"] == "assistant"]
    opaque = "signature" if api == "anthropic" else "encrypted_content"
    secrets = [w["provider_data"]["reasoning"][0][opaque] for w in replies]
    assert len(replies) >= 3 and all(len(s) > 40 for s in secrets)
    texts = shown(replies)
    for text, secret, wire in zip(texts, secrets, replies, strict=True):
        assert secret not in text
        assert f'"{opaque}": "kept for the provider ({len(secret)} chars)"' in text
        assert wire["reasoning_content"][:20] in text  # the readable part stays
        data = json.loads(text)
        assert data["provider_data"]["reasoning"][0]["type"] == wire["provider_data"][
            "reasoning"][0]["type"]  # fmt: skip
    assert shown([{"role": "user", "content": "hi"}]) == [
        json.dumps({"role": "user", "content": "hi"}, indent=2)]  # fmt: skip


async def test_a_moved_session_says_what_it_did_not_send_once_per_run(comms):
    session = an.Session()
    view = SessionView(session)
    with an.observe.serve() as server:
        claude = an.models.AnthropicModel("travel", base_url=server.base_url, api_key="k")
        agent = an.travel.travel_agent(model=claude)
        await agent.run(QUESTION, session=session)
        chat = an.models.OpenAIModel("travel", base_url=server.base_url, api_key="k")
        result = await agent.copy(model=chat).run("那周六呢？", session=session)
    decided = [e for e in result.events if e.type == "Decided"]
    said = [p for e in decided for p in e.problems if "was not sent" in p]
    assert len(decided) >= 3 and len(said) == 1  # the first call says it; the others do not
    assert decided[0].problems == (said[0],)
    assert "the reasoning of 3 assistant message(s) was not sent" in said[0]
    assert session.messages[-1].role == "assistant" and view.snapshot
