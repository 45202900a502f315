"""The stand-in model: read -> plan -> write, with its rules and phrases as data."""

from .model import MISBEHAVIOURS, TravelModel

__all__ = ["MISBEHAVIOURS", "TravelModel"]
