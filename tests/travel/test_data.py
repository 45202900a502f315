"""The dataset's integrity, its reproducibility, and that it ships inside the wheel."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from datetime import date
from pathlib import Path

import pandas as pd
import pytest

from agentnb.travel import data_dir, load

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def data():
    return load()


def test_size_and_coverage(data):
    assert len(data.city_names) >= 12
    for city in [
        "上海",
        "北京",
        "杭州",
        "广州",
        "深圳",
        "成都",
        "西安",
        "南京",
        "武汉",
        "重庆",
        "厦门",
        "昆明",
    ]:
        assert city in data.city_names
    days = pd.to_datetime(sorted(data.weather["date"].unique()))
    assert len(days) >= 21
    assert (days[1:] - days[:-1] == pd.Timedelta(days=1)).all()  # consecutive


def test_no_flight_arrives_before_it_departs(data):
    f = data.flights
    dep = pd.to_datetime(f["date"] + " " + f["departure_time"])
    arr = pd.to_datetime(f["arrival_date"] + " " + f["arrival_time"])
    assert (arr > dep).all()
    assert ((arr - dep) < pd.Timedelta(hours=6)).all()


def test_prices_positive_and_seats_sane(data):
    assert (data.flights["price_cny"] > 0).all()
    assert (data.flights["seats_left"] >= 0).all()
    assert (data.hotels["base_price_cny"] > 0).all()
    assert (data.availability["price_cny"] > 0).all()
    assert data.hotels["rating"].between(1, 5).all()
    assert (data.weather["temp_min_c"] <= data.weather["temp_max_c"]).all()
    assert data.weather["precip_prob"].between(0, 1).all()


def test_every_city_has_weather_every_day_and_hotels(data):
    days = set(data.weather["date"])
    for city in data.city_names:
        assert set(data.weather.loc[data.weather["city"] == city, "date"]) == days, city
        assert (data.hotels["city"] == city).sum() >= 3, city
    assert not data.weather.duplicated(["city", "date"]).any()
    per_hotel = data.availability.groupby("hotel_id")["date"].nunique()
    assert set(per_hotel.index) == set(data.hotels["hotel_id"]) and (per_hotel == len(days)).all()


def test_flight_cities_and_airports_are_known(data):
    cities = set(data.city_names)
    assert set(data.flights["from_city"]) <= cities and set(data.flights["to_city"]) <= cities
    airports = {code for c in data.city_list for code in c.airports}
    assert set(data.flights["from_airport"]) <= airports
    assert not data.flights.duplicated(["flight_no", "date"]).any()


def test_article_figures_are_pinned(data):
    f = data.flights
    mu = f[(f["flight_no"] == "MU5101") & (f["date"] == "2025-01-10")].iloc[0]
    assert (mu.from_airport, mu.to_airport, mu.departure_time, mu.arrival_time, mu.price_cny) == (
        "SHA",
        "PEK",
        "08:00",
        "10:15",
        880,
    )
    w = data.weather
    assert w[(w["city"] == "北京") & (w["date"] == "2025-01-10")].iloc[0]["condition"] == "晴"
    assert date(2025, 1, 10).weekday() == 4  # a Friday, as in the article


def test_the_generator_reproduces_the_files(tmp_path):
    subprocess.run(
        [sys.executable, str(REPO / "data/travel/make_dataset.py"), str(tmp_path)],
        check=True,
        capture_output=True,
    )
    for name in ["cities", "flights", "weather", "hotels", "hotel_availability"]:
        assert (tmp_path / f"{name}.csv").read_bytes() == (
            data_dir() / f"{name}.csv"
        ).read_bytes(), name


def test_the_manifest_describes_every_file():
    manifest = (REPO / "data/travel/README.md").read_text(encoding="utf-8")
    for path in (REPO / "data/travel").glob("*.csv"):
        assert f"`{path.name}`" in manifest, path.name


@pytest.mark.skipif(
    shutil.which("uv") is None and not (Path(sys.executable).parent / "uv").exists(),
    reason="needs uv to build the wheel",
)
def test_the_wheel_ships_the_data_and_reads_it_from_any_directory(tmp_path):
    uv = shutil.which("uv") or str(Path(sys.executable).parent / "uv")
    subprocess.run(
        [uv, "build", "--wheel", "--out-dir", str(tmp_path), str(REPO)],
        check=True,
        capture_output=True,
    )
    wheel = next(tmp_path.glob("agentnb-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    assert "agentnb/travel/_data/flights.csv" in names
    unpacked = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(unpacked)

    def run_from_root(code: str) -> str:  # only the unpacked wheel on the path, from cwd=/
        env = {"PYTHONPATH": str(unpacked), "PATH": "/usr/bin:/bin"}
        done = subprocess.run(
            [sys.executable, "-c", code], cwd="/", capture_output=True, text=True, env=env,
            check=True,
        )  # fmt: skip
        return done.stdout

    out = run_from_root(
        "import agentnb.travel as t; print(t.data_dir()); print(len(t.load().flights))"
    )
    folder, rows = out.split()
    assert folder == str(unpacked / "agentnb/travel/_data") and int(rows) > 1000
    assert "agentnb/models/_cassettes/travel_smollm2_tools.jsonl" in names
    out = run_from_root(
        "from agentnb.models import replay; print(replay.recorded('travel_smollm2_tools').path)"
    )
    assert out.strip() == str(unpacked / "agentnb/models/_cassettes/travel_smollm2_tools.jsonl")
