import subprocess
import sys


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agentnb", *args], capture_output=True, text=True, timeout=120
    )


def test_travel_prints_the_flow_and_the_stop_reason():
    out = run(
        "travel", "我周五从上海去北京出差，帮我看看航班和天气，再帮我订个酒店，预算控制在3000以内。"
    )
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert "[restore]" in text and "#1 assistant → search_flights" in text
    assert "[execute_tools]  search_flights ok" in text.replace(
        "[execute_tools] ", "[execute_tools]  "
    )
    assert "stop_reason=final_answer" in text and "5 model calls" in text


def test_travel_options_and_errors():
    out = run("travel", "--misbehave", "loop", "--json")
    assert out.returncode == 0 and "stop_reason=repeated_action" in out.stdout
    assert '"role": "tool"' in out.stdout
    bad = run("travel", "--fault", "search_weather=meteor")
    assert bad.returncode == 2 and "unknown fault 'meteor'" in bad.stderr
