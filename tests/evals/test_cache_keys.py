"""The response cache, attacked (issue 27 H3, H4, M5): a key that covers everything that can
change a reply, files any text survives, one bad line never fatal."""

from __future__ import annotations

import json

import httpx

import agentnb as an
from agentnb.evals import ResponseCache
from agentnb.evals.cache import model_identity

TASKS = an.TaskSet([an.Task("t", "q")])


def replying(text):
    def reply(request):
        return text

    return an.models.FunctionModel(reply)


async def test_function_models_with_other_functions_never_share_replies():
    """H3: two FunctionModels whose functions share a qualified name (a factory's closures,
    lambdas) got each other's cached replies."""
    cache = ResponseCache()
    a = an.Agent(model=replying("from a"))
    b = an.Agent(model=replying("from b"))  # same qualname "replying.<locals>.reply"
    lam_a = an.Agent(model=an.models.FunctionModel(lambda r: "lambda a"))
    lam_b = an.Agent(model=an.models.FunctionModel(lambda r: "lambda b"))
    ev = await an.evaluate({"a": a, "b": b, "la": lam_a, "lb": lam_b}, TASKS, cache=cache)
    assert [r.output for r in ev.records] == ["from a", "from b", "lambda a", "lambda b"]
    assert cache.hits == 0


def openai_model(**options):
    def handler(request):
        body = json.loads(request.content)
        text = f"t={body.get('temperature')} org={request.headers.get('x-org')}"
        message = {"role": "assistant", "content": text}
        return httpx.Response(
            200, json={"choices": [{"message": message, "finish_reason": "stop"}]}
        )

    return an.models.OpenAIModel(
        base_url="http://127.0.0.1:9/v1",
        model="m",
        transport=httpx.MockTransport(handler),
        **options,
    )


async def test_openai_models_with_other_params_or_headers_never_share_replies():
    """H3: OpenAIModel(params={"temperature": ...}) and headers= were not in the key."""
    cache = ResponseCache()
    variants = {
        "cold": an.Agent(model=openai_model(params={"temperature": 0.0})),
        "hot": an.Agent(model=openai_model(params={"temperature": 0.9})),
        "org-a": an.Agent(model=openai_model(headers={"X-Org": "a"})),
        "org-b": an.Agent(model=openai_model(headers={"X-Org": "b"})),
    }
    ev = await an.evaluate(variants, TASKS, cache=cache)
    assert [r.output for r in ev.records] == [
        "t=0.0 org=None",
        "t=0.9 org=None",
        "t=None org=a",
        "t=None org=b",
    ]
    assert cache.hits == 0
    keyed = openai_model(api_key="sk-secret-key-123", headers={"X-Api-Key": "hdr-secret-456"})
    shown = repr(model_identity(keyed))
    assert "sk-secret-key-123" not in shown and "hdr-secret-456" not in shown


async def test_a_model_whose_identity_cannot_be_known_is_not_cached():
    class Slotted:
        __slots__ = ("name", "streaming")

        def __init__(self):
            self.name, self.streaming = "slotted", False

        async def complete(self, request):
            return an.models.base.coerce_response("slot", self.name)

        async def stream(self, request):
            yield  # never streamed here

    assert model_identity(Slotted()) is None
    cache = ResponseCache()
    ev = await an.evaluate({"s": an.Agent(model=Slotted())}, TASKS, repeats=2, cache=cache)
    assert {r.output for r in ev.records} == {"slot"}
    assert cache.uncached == 2 and len(cache) == 0 and "2 uncached" in repr(cache)


async def test_a_cache_file_with_line_separators_and_a_torn_line_reads_back(tmp_path):
    """H4/M5: U+2028 in a reply tore the line on reading; one bad line made it unusable."""
    odd = "one\u2028two\u0085three \udcff"
    path = tmp_path / "cache.jsonl"
    cache = ResponseCache(path)
    ev = await an.evaluate({"a": an.Agent(model=replying(odd))}, TASKS, cache=cache)
    assert ev.records[0].output == odd
    with path.open("a", encoding="utf-8") as f:
        f.write('{"key": "torn", "response": {"mess\n')
    again = ResponseCache(path)
    assert len(again) == 1 and again.bad_lines and again.bad_lines[0][0] == 2
    ev2 = await an.evaluate({"a": an.Agent(model=replying(odd))}, TASKS, cache=again)
    assert ev2.records[0].output == odd and again.hits == 1


class Settings(an.models.Model):
    """A model whose settings have names a secrets rule by name would drop."""

    def __init__(self, max_tokens, key_prefix="k", api_key="sk-one-0123456789"):
        from agentnb._secrets import Secrets

        self.name = "settings"
        self.max_tokens, self.key_prefix, self.token_budget = max_tokens, key_prefix, 100
        self.api_key = api_key
        self.secrets = Secrets([api_key])

    async def complete(self, request):
        reply = f"max_tokens={self.max_tokens}"
        return an.models.ModelResponse(an.messages.AssistantMessage(content=reply))


async def test_every_setting_counts_whatever_its_name_and_only_credential_values_do_not():
    """The cache and the sweep identity ignored every setting whose name holds 'token' or
    'key': two variants differing only in max_tokens shared a cached reply (M2)."""
    from agentnb.evals.sweep import variant_digest

    cache = ResponseCache()
    variants = {"short": an.Agent(model=Settings(16)), "long": an.Agent(model=Settings(4096))}
    ev = await an.evaluate(variants, TASKS, cache=cache)
    assert [r.output for r in ev.records] == ["max_tokens=16", "max_tokens=4096"]
    assert cache.hits == 0
    assert model_identity(Settings(16)) != model_identity(Settings(16, key_prefix="x"))
    assert variant_digest(variants["short"]) != variant_digest(variants["long"])
    # another key is not another model: credential values are masked, not identified
    other_key = Settings(16, api_key="sk-two-9876543210")
    assert model_identity(Settings(16)) == model_identity(other_key)
    assert variant_digest(an.Agent(model=Settings(16))) == variant_digest(an.Agent(model=other_key))
    shown = repr(model_identity(Settings(16))) + repr(model_identity(other_key))
    assert "sk-one" not in shown and "sk-two" not in shown
    openai = [openai_model(params={"max_tokens": n}) for n in (16, 4096)]
    assert model_identity(openai[0]) != model_identity(openai[1])


async def test_a_function_models_key_does_not_change_as_the_process_goes_on():
    """The key hashed the function's code with marshal's default version, whose output
    depends on the reference counts of its constants: the same model missed its own replies
    once something else held a reference (a second sweep re-ran calls it had cached)."""
    import gc

    def reply(request):
        return "晴天 sunny"

    model = an.models.FunctionModel(reply, name="m")
    request = an.models.ModelRequest([{"role": "user", "content": "天气"}])
    before = an.evals.ResponseCache.key(model, request, 0)
    held = [reply.__code__.co_consts for _ in range(3)]  # other references to its constants
    gc.collect()
    assert an.evals.ResponseCache.key(model, request, 0) == before, held


async def test_a_cached_model_keeps_its_models_window_so_the_agent_trims_the_same():
    """An agent adopts its model's ``context_window``; with a cache in front (as an evaluation
    with ``cache=`` puts one) it is the same window, so requests are trimmed the same."""
    from agentnb.evals.cache import CachedModel

    model = replying("ok")
    model.context_window = 4096
    cached = CachedModel(model, ResponseCache())
    assert cached.context_window == 4096
    agent = an.Agent("sys", model=model)
    assert agent.context_window == 4096
    assert agent.copy(model=cached).context_window == 4096
    assert CachedModel(replying("ok"), ResponseCache()).context_window is None
