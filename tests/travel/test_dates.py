from datetime import date

import pytest

from agentnb.travel.dates import DEFAULT_TODAY, find_date, resolve_date, vague_date


@pytest.mark.parametrize(
    "text,expected",
    [
        ("周五", "2025-01-10"),
        ("星期五", "2025-01-10"),
        ("礼拜五", "2025-01-10"),
        ("这周五", "2025-01-10"),
        ("周六", "2025-01-11"),
        ("周末", "2025-01-11"),
        ("周日", "2025-01-12"),
        ("周一", "2025-01-06"),
        ("今天", "2025-01-06"),
        ("明天", "2025-01-07"),
        ("后天", "2025-01-08"),
        ("大后天", "2025-01-09"),
        ("下周一", "2025-01-13"),
        ("下周五", "2025-01-17"),
        ("下个星期三", "2025-01-15"),
        ("2025-01-10", "2025-01-10"),
        ("2025/1/10", "2025-01-10"),
        ("1月12日", "2025-01-12"),
        ("Friday", "2025-01-10"),
        ("this Friday", "2025-01-10"),
        ("next Monday", "2025-01-13"),
        ("tomorrow", "2025-01-07"),
        ("the day after tomorrow", "2025-01-08"),
        ("weekend", "2025-01-11"),
        ("TODAY", "2025-01-06"),
    ],
)
def test_resolve(text, expected):
    assert resolve_date(text, DEFAULT_TODAY).isoformat() == expected


def test_reference_date_is_configurable():
    assert resolve_date("周五", date(2025, 1, 11)) == date(2025, 1, 17)
    assert resolve_date("明天", date(2025, 1, 31)) == date(2025, 2, 1)


def test_unreadable_dates_say_what_works():
    with pytest.raises(ValueError, match="use YYYY-MM-DD"):
        resolve_date("下辈子")


def test_find_date_in_text():
    assert find_date("我周五从上海去北京出差") == "周五"
    assert find_date("帮我查一下周六杭州的酒店") == "周六"  # 一下 + 周六, not 下周六
    assert find_date("下周六去杭州") == "下周六"
    assert find_date("I fly next Monday") == "next Monday"
    assert find_date("你是什么？") is None


@pytest.mark.parametrize(
    "text,expected",
    [
        ("下个月15号", "2025-02-15"),
        ("15号", "2025-01-15"),
        ("3号", "2025-02-03"),  # the 3rd has passed: next month's
        ("1月20号", "2025-01-20"),
        ("January 20", "2025-01-20"),
        ("Jan 20th", "2025-01-20"),
        ("20 January", "2025-01-20"),
        ("the 15th", "2025-01-15"),
    ],
)
def test_days_of_the_month(text, expected):
    assert resolve_date(text, DEFAULT_TODAY).isoformat() == expected
    assert find_date(f"I go {text} ok") == text or find_date(f"我{text}去") == text


def test_dates_that_name_no_day_are_found_not_guessed():
    assert vague_date("下个月去北京出差") == "下个月" and find_date("下个月去北京出差") is None
    assert vague_date("I fly to Beijing next month") == "next month"
    assert vague_date("改天再说") == "改天" and vague_date("周五去北京") is None
    with pytest.raises(ValueError, match="no day 30 in month 2"):
        resolve_date("2月30号")
