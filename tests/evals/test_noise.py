"""The noise floor first (issue 41): a deterministic model has none and the gate proceeds; a
seeded flaky one shows its flip rate and the gate refuses a difference within it; the CLI
prints it; the optimiser takes it; plan uses it."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import agentnb as an
from agentnb.__main__ import main
from agentnb.testing import assert_no_regression
from tests.evals import optimise_agents as toys
from tests.evals import tuning_agents as toy


async def test_a_deterministic_model_has_no_floor_and_the_gate_proceeds() -> None:
    floor = await an.evals.noise(toy.polite(), toy.tasks(), repeats=3, log=False)
    assert floor.unstable == [] and floor.flip_rate == 0.0 and floor.tasks == 8
    assert floor.verdict.endswith("no noise floor, a gate reads differences as they are")
    ev = await an.evaluate(toy.variants(), toy.tasks(), log=False)
    c = ev.compare("polite", "terse", noise=floor)
    assert not c.underpowered and c.verdict == ev.compare("polite", "terse").verdict


async def test_a_seeded_flaky_model_shows_its_flip_rate_and_the_gate_refuses_within_it() -> None:
    tasks = toy.flaky_tasks()
    floor = await an.evals.noise(toy.flaky_agent(), tasks, repeats=6, log=False)
    assert floor.unstable == ["coin-0", "coin-1", "coin-2"]
    for task in floor.unstable:
        p, k = floor.counts[task]
        assert floor.flip_rate_of(task) == pytest.approx(2 * p * (k - p) / (k * (k - 1)))
    assert floor.flip_rate == pytest.approx(sum(map(floor.flip_rate_of, floor.counts)) / 13)
    assert floor.frame["disagrees"].sum() == 3
    ev = await an.evaluate(toy.flaky_variants(), tasks, repeats=1, seed=1, log=False)
    slip = ev.compare("base", "slip", noise=floor)  # one task worse: within 3 noisy tasks
    assert slip.underpowered
    assert slip.verdict.startswith(
        "underpowered: the baseline disagrees with itself on 3 of 13 tasks"
    )
    assert assert_no_regression(ev, "base", "slip", noise=floor).underpowered
    broke = ev.compare("base", "break", noise=floor)  # ten tasks worse: beyond the floor
    assert not broke.underpowered
    with pytest.raises(AssertionError, match="break regressed against base"):
        assert_no_regression(ev, "base", "break", noise=floor)
    with pytest.raises(an.ConfigurationError, match="measured on other tasks"):
        ev.compare("base", "slip", noise=an.evals.NoiseFloor("x", 2, {"coin-0": (1, 2)}))


def test_plan_uses_the_floor() -> None:
    floor = an.evals.NoiseFloor(
        "base", 4, {f"t{i}": ((1, 4) if i < 3 else (4, 4)) for i in range(13)}
    )
    within = an.evals.plan(0.10, noise=floor, tasks=13)
    assert within.within_noise and "within that noise" in within.verdict
    beyond = an.evals.plan(0.40, noise=floor, tasks=13)
    assert not beyond.within_noise
    assert beyond.discordant == pytest.approx(3 / 13 + 0.40)
    assert beyond.needed > an.evals.plan(0.40, discordant=0.40).needed


def test_the_cli_prints_the_floor_and_gives_no_verdict_within_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    junit = tmp_path / "report.xml"
    code = main(["eval", "tests.evals.tuning_agents:flaky_tasks", "--variants",
                 "tests.evals.tuning_agents:flaky_variants", "--noise", "6", "--seed", "1",
                 "--quiet", "--log", "off", "--junit", str(junit)])  # fmt: skip
    out = capsys.readouterr().out
    assert "noise floor: base disagrees with itself on 3 of 13 tasks over 6 repeats" in out
    assert "UNDERPOWERED: <Comparison base vs slip" in out
    assert "REGRESSION: <Comparison base vs break" in out and code == 1
    gate = {c.get("name"): c for c in ET.parse(junit).getroot().find("testsuite[@name='gate']")}
    skipped = gate["slip vs base"].find("skipped")
    assert skipped is not None and skipped.get("message").startswith("underpowered: the baseline")
    assert gate["break vs base"].find("failure") is not None


async def test_the_optimiser_takes_the_floor_as_an_option() -> None:
    train, held = toys.toy_sets()
    hard = an.TaskSet([an.Task(f"hard{i}", "a hard task", [an.checks.answer_contains("ok")])
                       for i in range(3, 10)])  # fmt: skip
    proven = await an.optimize(toys.toy(), train, validation=hard, proposer=toys.careful(),
                               budget=80, repeats=2, noise=True, progress=False, log=False)  # fmt: skip
    assert proven.noise.unstable == [] and proven.best.status == "promoted"
    noisy = an.evals.NoiseFloor("c0", 2, {t: (1, 2) for t in hard.names})
    held_back = await an.optimize(toys.toy(), train, validation=hard, proposer=toys.careful(),
                                  budget=80, noise=noisy, progress=False, log=False)  # fmt: skip
    gated = [c for c in held_back.candidates if c.gate]
    assert gated and all(c.status == "held" for c in gated)
    assert "underpowered: the baseline disagrees with itself on 7 of 7 tasks" in gated[0].reason
    with pytest.raises(an.ConfigurationError, match="give repeats=2 or more"):
        await an.optimize(toys.toy(), train, validation=hard, proposer=toys.careful(),
                          budget=80, noise=True, progress=False, log=False)  # fmt: skip
    del held
