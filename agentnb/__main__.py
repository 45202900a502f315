"""Command line: ``python -m agentnb travel "我周五从上海去北京出差…"``.

``travel`` runs the travel assistant in a terminal and prints the loop as it happens: each
stage, the messages it adds, tool results, and why the run stopped. ``eval`` evaluates
variants on a task set and exits 1 on a regression (:mod:`agentnb.evals.ci`); ``optimize``
improves an agent's texts, each promotion gated on held-out tasks
(:mod:`agentnb.evals.optimise.cli`; ``--proposer travel`` is the stand-in's, offline);
``rescore`` checks stored runs again without calling the agent's model
(:mod:`agentnb.evals.rescore_cli`);
``worker`` runs a durable Runtime's tasks.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import textwrap
from typing import Any

from . import events as ev
from .agent import Agent
from .session.session import Session


def _short(text: str, width: int) -> str:
    text = text.replace("\n", " ")
    return text if len(text) <= width else text[: width - 1] + "…"


def describe(event: ev.Event, width: int = 100) -> str | None:
    """One terminal line for the events worth showing (None for the others)."""
    tag = f"[{event.stage}]".ljust(16)
    if isinstance(event, ev.MessageAppended):
        m = event.message.wire()
        role = m["role"]
        if role == "assistant" and m.get("tool_calls"):
            calls = ", ".join(
                f"{c['function']['name']}({c['function']['arguments']})" for c in m["tool_calls"]
            )
            return tag + _short(f"#{event.index} assistant → {calls}", width)
        if role == "tool":
            return tag + _short(f"#{event.index} tool {m.get('name')} ← {m['content']}", width)
        if role == "assistant":
            body = textwrap.indent(str(m.get("content") or ""), " " * 20)
            return tag + f"#{event.index} assistant:\n{body}"
        return tag + _short(f"#{event.index} {role}: {m.get('content')}", width)
    if isinstance(event, ev.RequestAssembled):
        return tag + event.summary()
    if isinstance(event, ev.ModelResponded):
        est = " est." if event.usage.estimated else ""
        return tag + (
            f"model replied in {event.latency * 1000:.1f} ms, "
            f"{event.usage.total_tokens} tokens{est}"
            f" ({event.finish_reason})"
        )
    if isinstance(event, ev.Decided) and event.problems:
        return tag + "problems: " + "; ".join(event.problems)
    if isinstance(event, ev.ToolFinished):
        state = "ok" if event.ok else f"FAILED ({event.kind})"
        return tag + f"{event.name} {state} in {event.latency * 1000:.1f} ms"
    if isinstance(event, ev.RunStopped):
        return tag + f"stop_reason={event.reason}: {event.detail}"
    return None


async def _travel(args: argparse.Namespace) -> int:
    from . import travel

    desk = travel.TravelTools(args.today, timeout=args.tool_timeout)
    for spec in args.fault or []:
        tool, _, kind = spec.partition("=")
        desk.inject(tool, kind)
    model = travel.TravelModel(args.misbehave, stream=args.stream)
    options: dict[str, Any] = {"max_iterations": args.max_iterations}
    if args.parallel:
        options["parallel_tool_calls"] = True
    agent: Agent = travel.travel_agent(model, language=args.lang, tools=desk, **options)
    session = Session()
    text = " ".join(args.request) or travel.ARTICLE_REQUESTS["000"]
    print(f"agentnb travel assistant · {model.name} · today = {desk.today} · session {session.id}")
    streamed = typed = False
    async for event in agent.stream(text, session=session):
        if isinstance(event, ev.ModelDelta) and event.kind == "text":
            if not streamed:
                print(" " * 16 + "typing: ", end="")
            print(event.delta, end="", flush=True)
            streamed = typed = True
            continue
        if streamed and not isinstance(event, ev.ModelDelta):
            print()
            streamed = False
        if typed and isinstance(event, ev.MessageAppended) and event.message.role == "assistant":
            typed = False
            print(f"[{event.stage}]".ljust(16) + f"#{event.index} assistant (streamed above)")
            continue
        line = describe(event)
        if line:
            print(line)
        if isinstance(event, ev.RunStopped):
            usage = event.usage
            est = " (estimated)" if usage.estimated else ""
            print(
                f"\n{len(session)} messages · {event.iterations} model calls · "
                f"{usage.total_tokens} tokens{est} · stop_reason={event.reason}"
            )
    if args.json:
        print(json.dumps(session.to_openai(), ensure_ascii=False, indent=2))
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["worker"]:  # the service's worker: no travel data to load
        from .evals.sweep_job import WORKER  # its --variants and --tasks: a sweep's runs
        from .service import worker

        return worker.main(argv[1:], [WORKER])
    parser = argparse.ArgumentParser(prog="python -m agentnb", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("worker", help="run a durable Runtime's tasks (python -m agentnb worker -h)")
    from .evals import ci, rescore_cli
    from .evals.optimise import cli as optimise_cli

    ci.add_parser(sub)
    optimise_cli.add_parser(sub)
    rescore_cli.add_parser(sub)
    t = sub.add_parser("travel", help="run the travel assistant on a request")
    t.add_argument("request", nargs="*", help="what the user says (default: article 000's request)")
    t.add_argument("--lang", choices=["zh", "en"], default="zh", help="instructions language")
    t.add_argument(
        "--today", default="2025-01-06", help="reference date for 周五/明天 (YYYY-MM-DD)"
    )
    t.add_argument("--parallel", action="store_true", help="allow several tool calls per reply")
    t.add_argument("--stream", action="store_true", help="stream the model's text")
    t.add_argument(
        "--misbehave", choices=sorted(__import__("agentnb.travel", fromlist=["x"]).MISBEHAVIOURS)
    )
    t.add_argument(
        "--fault",
        action="append",
        metavar="TOOL=KIND",
        help="inject a fault, e.g. search_weather=timeout (repeatable)",
    )
    t.add_argument("--tool-timeout", type=float, default=5.0, help="seconds per tool call")
    t.add_argument("--max-iterations", type=int, default=6)
    t.add_argument("--json", action="store_true", help="print the final transcript as JSON")
    args = parser.parse_args(argv)
    if args.command == "eval":
        return ci.main(args)
    if args.command == "rescore":
        return rescore_cli.main(args)
    if args.command == "optimize":
        from .travel import TravelModel

        return optimise_cli.main(args, {"travel": lambda: TravelModel().proposer()})
    try:
        return asyncio.run(_travel(args))
    except ValueError as exc:  # bad --fault or --today
        parser.error(str(exc))
    return 2


if __name__ == "__main__":
    sys.exit(main())
