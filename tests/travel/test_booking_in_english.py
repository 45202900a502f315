"""confirm_booking acts on an English request too: the pattern once held backspace bytes where
``\\b`` was meant, so "book" never matched (issue 25)."""

from __future__ import annotations

import agentnb as an
from agentnb.travel import INSTRUCTIONS_EN, travel_agent


async def test_an_english_booking_request_is_asked_about_before_booking():
    agent = travel_agent(instructions=INSTRUCTIONS_EN + "\nConfirm with the user before booking.")
    result = await agent.run("Please book a hotel in Beijing for Friday.", session=an.Session())
    assert "Shall I book it?" in result.output


async def test_a_word_that_merely_contains_book_is_no_booking_request():
    agent = travel_agent(instructions=INSTRUCTIONS_EN + "\nConfirm with the user before booking.")
    result = await agent.run("Weather in Beijing on Friday? I'll read a notebook.")
    assert "Shall I book it?" not in result.output
