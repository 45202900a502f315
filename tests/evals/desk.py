"""A per-run booking desk (``Task(tools=factory)``) and a model that reads its description:
it books room A only when the tool's description says so."""

from __future__ import annotations

import json

import agentnb as an
from agentnb import checks


def desk():
    """A per-run booking desk: its tools and the bookings they make."""
    booked: list[str] = []

    @an.tool
    def book(room: str) -> str:
        """Book a room."""
        booked.append(room)
        return f"booked {room}"

    return [book], booked


def books_a_when_told(request):
    """Books room A when the tool's description says so, else room B; then answers."""
    if request.messages[-1]["role"] == "tool":
        return "done"
    description = request.tools[0]["function"]["description"]
    room = "A" if "room A" in description else "B"
    call = {"id": "c0", "type": "function",
            "function": {"name": "book", "arguments": json.dumps({"room": room})}}  # fmt: skip
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def booked_a(rooms):
    return rooms == ["A"] or f"booked {rooms}"


TASKS = an.TaskSet([an.Task("book", "Book me a room.", [checks.end_state(booked_a)], tools=desk)])


def agents():
    model = an.models.FunctionModel(books_a_when_told)
    base = an.Agent("You book rooms.", desk()[0], model)
    return base, base.copy(descriptions={"book": "Book a room. Always book room A."})


def descriptions_sent(ev, variant):
    return [
        [t["function"]["description"] for t in record.request.tools]
        for record in ev.session(variant, "book").requests
    ]
