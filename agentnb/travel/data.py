"""The travel dataset: CSV files read once, through a helper that works from any directory.

In a wheel the files live in ``agentnb/travel/_data``; in a source checkout they are read
from the repository's ``data/travel`` (see ``data/travel/README.md`` for what each holds).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import pandas as pd

__all__ = ["City", "TravelData", "data_dir", "load", "phrasings"]

FILES = ("cities", "flights", "weather", "hotels", "hotel_availability")


def data_dir() -> Path:
    """The folder holding the travel CSV files."""
    packaged = Path(__file__).parent / "_data"
    if (packaged / "flights.csv").exists():
        return packaged
    checkout = Path(__file__).resolve().parents[2] / "data" / "travel"
    if (checkout / "flights.csv").exists():
        return checkout
    raise FileNotFoundError(
        f"the travel dataset is missing: looked in {packaged} and {checkout}. Reinstall agentnb, "
        "or run `python data/travel/make_dataset.py` in a source checkout."
    )


@dataclass(frozen=True)
class City:
    name: str  # Chinese name, the key used everywhere in the data
    name_en: str
    aliases: tuple[str, ...]
    airports: dict[str, str]  # code -> Chinese airport name


class TravelData:
    """The five tables plus lookups. Read-only; one shared instance per folder."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

        def read(path: Path, keep_default_na: bool = True) -> pd.DataFrame:
            dtypes = {"flight_no": str, "hotel_id": str}
            return pd.read_csv(path, dtype=dtypes, keep_default_na=keep_default_na)

        self.cities = read(folder / "cities.csv", keep_default_na=False)
        self.flights = read(folder / "flights.csv")
        self.weather = read(folder / "weather.csv")
        self.hotels = read(folder / "hotels.csv", keep_default_na=False)
        self.availability = read(folder / "hotel_availability.csv")
        self.city_list: list[City] = []
        self._names: dict[str, str] = {}
        for row in self.cities.to_dict("records"):
            aliases = tuple(a for a in str(row["aliases"]).split(";") if a)
            airports = {}
            for item in str(row["airports"]).split(";"):
                code, name, _en = item.split(":", 2)
                airports[code] = name
            city = City(str(row["city"]), str(row["city_en"]), aliases, airports)
            self.city_list.append(city)
            for key in (city.name, city.name_en, *aliases, city.name + "市"):
                self._names[key.lower()] = city.name
        dates = sorted(self.weather["date"].unique())
        self.first_day = date.fromisoformat(dates[0])
        self.last_day = date.fromisoformat(dates[-1])
        self.landmarks = sorted(set(self.hotels["landmark"]) | set(self.hotels["district"]))
        #: English landmark name (lower case) -> Chinese landmark
        self.landmarks_en = {
            str(en).lower(): str(zh)
            for en, zh in zip(self.hotels["landmark_en"], self.hotels["landmark"], strict=True)
            if en
        }

    @property
    def city_names(self) -> list[str]:
        return [c.name for c in self.city_list]

    def resolve_city(self, text: str) -> str | None:
        """The dataset's name for a city given in Chinese, English or an alias; else None."""
        key = text.strip().lower()
        if key in self._names:
            return self._names[key]
        for suffix in ("市", " city"):
            if key.endswith(suffix) and key[: -len(suffix)] in self._names:
                return self._names[key[: -len(suffix)]]
        return None

    def city(self, name: str) -> City:
        return next(c for c in self.city_list if c.name == name)


@functools.lru_cache(maxsize=4)
def _load(folder: str) -> TravelData:
    return TravelData(Path(folder))


def load(folder: str | Path | None = None) -> TravelData:
    """The dataset (cached per folder)."""
    return _load(str(folder or data_dir()))


def phrasings() -> pd.DataFrame:
    """The phrasing set (``phrasings.jsonl``): one row per request, with the tool calls the
    embedded model must make or the question it must ask (see data/travel/README.md)."""
    return pd.read_json(data_dir() / "phrasings.jsonl", lines=True, dtype=False)
