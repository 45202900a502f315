from __future__ import annotations

import asyncio
import importlib.util
import os
from pathlib import Path

import pytest
from hypothesis import settings

HERE = Path(__file__).parent

# CI runs a fixed set of examples (reproducible from the log); locally they keep exploring.
settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")

# The experiment log records every evaluation by default, in the working directory: the tests
# (and the notebooks and JupyterLab kernels they start, which inherit this) record nothing
# unless they say where (log=...); tests/evals/test_experiment_log.py tests the default place.
os.environ["AGENTNB_LOG"] = "off"

import agentnb as an  # noqa: E402


@an.tool
def search_flights(departure: str, destination: str, date: str) -> dict:
    """查询指定日期从出发地到目的地的航班列表.

    Args:
        departure: 出发地城市名
        destination: 目的地城市名
        date: 日期，格式为 YYYY-MM-DD
    """
    return {"flights": [{"flight_no": "MU5101", "departure_time": "08:00", "price": 880}]}


@an.tool
def search_weather(city: str, date: str) -> dict:
    """查询城市某天的天气."""
    return {"city": city, "date": date, "condition": "晴", "min_c": -3, "max_c": 5}


@an.tool
async def search_hotels(city: str, check_in_date: str, nights: int = 1) -> dict:
    """查询可预订酒店及价格."""
    await asyncio.sleep(0)
    return {"hotels": [{"name": "全季", "price": 520}], "nights": nights}


@an.tool(threaded=False)
def calculate_cost(items: list[float]) -> dict:
    """计算总价."""
    return {"total": sum(items)}


TRAVEL_TOOLS = [search_flights, search_weather, search_hotels, calculate_cost]


@pytest.fixture
def tools() -> list[an.Tool]:
    return list(TRAVEL_TOOLS)


# -- real servers on 127.0.0.1, started by the tests (one owner: the servers and observe tiers
# share them, so SmolLM2 loads once per test session) ------------------------------------------
def pytest_configure(config):
    config.addinivalue_line(
        "markers", "local_model: needs the `local` extra (llama-cpp-python and the SmolLM2 GGUF)"
    )


@pytest.fixture
def fault_server():
    from tests.servers.fault_server import FaultServer

    with FaultServer() as server:
        yield server


@pytest.fixture(scope="session")
def llama_server():
    """One llama.cpp server for the session; skipped only when the `local` extra is absent."""
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("the `local` extra (llama-cpp-python) is not installed: `make local`")
    from agentnb.errors import ConfigurationError
    from agentnb.models.local import LocalServer

    try:
        server = LocalServer()
    except ConfigurationError as exc:
        pytest.skip(f"the SmolLM2 model file is missing: {exc}")
    with server:
        yield server
