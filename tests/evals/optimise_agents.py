"""Agents the optimize command tests name on its command line."""

import agentnb as an
from agentnb.travel import TravelModel


def weak():
    return an.travel.travel_agent(model=TravelModel("fabricate"), instructions="你是差旅助手。")


def article():
    return an.travel.travel_agent()
