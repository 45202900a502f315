"""Failed tool results in the user's language, read from their machine-readable fields.

The runtime marks every failed result with a ``kind`` (``agentnb.ERROR_KINDS``) and the travel
tools add a ``code`` (``unknown_city``, ``bad_date``, ``date_out_of_range``, …). The model
reads those, never the English ``error`` text, so a Chinese answer has no English in it.
"""

from __future__ import annotations

from typing import Any

from .shapes import leaves

__all__ = ["REASONS", "describe_failure", "reason_of", "when"]

#: kind or code -> (zh, en) reason shown to the user.
REASONS: dict[str, tuple[str, str]] = {
    "timeout": ("查询超时", "the lookup timed out"),
    "rate_limited": ("服务繁忙，请求被限流", "the service is busy: rate limited"),
    "tool_error": ("上游服务出错", "the service failed"),
    "unknown_tool": ("要用的工具不存在", "the tool does not exist"),
    "invalid_arguments": ("查询参数有误", "the lookup had wrong arguments"),
    "invalid_json": ("查询参数格式有误", "the lookup's arguments were malformed"),
    "cancelled": ("查询被取消", "the lookup was cancelled"),
    "not_executed": ("查询没有执行", "the lookup did not run"),
    "uncertain": ("这一步可能已执行，也可能没有，请先核实", "it may or may not have happened"),
    # a replaying tool answered: the call left the recorded run, so nothing was executed
    "not_recorded": (
        "回放记录里没有这次查询，未执行",
        "the replay recording has no such call: not run",
    ),
    "mismatch": (
        "回放记录里这一步是另一次查询，未执行",
        "the replay recorded another call here: not run",
    ),
    "exhausted": (
        "回放记录已到尽头，这次查询未执行",
        "the replay recording ended before this call: not run",
    ),
    "bad_date": ("无法识别日期", "the date could not be read"),
    "date_out_of_range": ("日期超出数据范围", "the date is outside the data"),
    "stay_out_of_range": ("入住晚数超出数据范围", "the stay runs past the end of the data"),
    # not a failure: the result came back, but as prose, not data (000 §4.3)
    "not_data": ("结果不是结构化数据，无法读取", "the result was not structured data"),
    # not a failure: data, but in a shape the stand-in does not know (issue 30)
    "foreign": ("结果的格式无法识别", "the result came in a shape I do not know"),
}

#: How long a tool's own error text may be to be named in the answer (longer: the generic reason).
_OWN_ERROR = 40


def reason_of(failure: Any) -> tuple[str, str]:
    """(zh, en) reason for a failed result: the runtime's ``kind`` or the tool's ``code``, or,
    for a tool's own fixed structure (``{"error": "上游服务超时", "fallback": []}``: no kind,
    no code), the error the tool reported, named as it reported it — never relabelled."""
    own = " ".join(str(failure.error or "").split())
    if failure.kind == "failed" and 0 < len(own) <= _OWN_ERROR:
        return f"工具报告：{own}", f"the tool reported: {own}"
    return REASONS.get(failure.kind, REASONS["tool_error"])


#: What a section's unreadable result hides, by the section's English name.
_UNREAD = {
    "Flights": ("票价", "the fares"),
    "Hotel": ("房价", "the room rates"),
    "Weather": ("天气", "the forecast"),
    "Budget": ("总价", "the total"),
}


def when(data: dict[str, Any], zh: bool) -> str:
    """The result's date with its weekday: 2025-01-10（周五） / 2025-01-10 (Fri)."""
    day = data.get("date") or data.get("check_in") or ""
    weekday = data.get("weekday", "")
    if zh:
        return f"{day}（{weekday}）" if weekday else day
    names = dict(
        zip("一二三四五六日", ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"], strict=True)
    )
    return f"{day} ({names.get(weekday[-1:], '')})" if weekday else day


def describe_failure(what: tuple[str, str], last: Any) -> tuple[str, str]:
    """(zh, en) lines for a section whose lookup failed, from ``last.kind`` and its data, or
    whose result came back as prose (``ok`` with no data: ``not_data``)."""
    data: dict[str, Any] = last.data or {}
    zh_reason, en_reason = reason_of(last)
    if (
        last.kind == "not_data"
    ):  # it came back, but not as data (prose): not an upstream failure (000 §4.3)
        zh_what, en_what = _UNREAD.get(what[1], ("内容", "it"))
        return (
            f"{what[0]}：查到了结果，但不是结构化数据，无法读取{zh_what}。",
            f"{what[1]}: the lookup returned a result, but not as structured data, so I "
            f"cannot read {en_what}.",
        )
    if last.kind == "foreign":  # data it cannot interpret: quote what it sees, use nothing
        zh_what, en_what = _UNREAD.get(what[1], ("内容", "it"))
        seen = leaves(last.raw)
        quoted = "、".join(f"{k}={v}" for k, v in seen)
        return (
            f"{what[0]}：查到了结果，但格式不是我认识的，无法读取{zh_what}"
            + (f"；结果中有：{quoted}。" if seen else "。"),
            f"{what[1]}: the lookup returned a result in a shape I do not know, so I cannot "
            f"read {en_what}" + (f"; it says: {', '.join(f'{k}={v}' for k, v in seen)}." if seen
                                 else "."),
        )  # fmt: skip
    if last.kind == "bad_date":
        raw = data.get("date", "")
        return (
            f"{what[0]}：无法识别日期「{raw}」。请告诉我具体是哪一天（例如 1月10日 或 周五）。",
            f"{what[1]}: I cannot read the date '{raw}'. Which day do you mean "
            "(e.g. 10 January or Friday)?",
        )
    if last.kind == "date_out_of_range":
        day, first, end = data.get("date", ""), data.get("first_day", ""), data.get("last_day", "")
        return (
            f"{what[0]}：{day} 超出了可查询的日期范围（{first} 至 {end}），无法查询。"
            "请换一个范围内的日期。",
            f"{what[1]}: {day} is outside the dates I have ({first} to {end}). "
            "Please pick a date in that range.",
        )
    if last.kind == "stay_out_of_range":
        end = data.get("last_day", "")
        return (
            f"{what[0]}：入住晚数超出了数据范围（数据截至 {end}），请减少晚数。",
            f"{what[1]}: the stay runs past the end of the data ({end}); ask for fewer nights.",
        )
    return (
        f"{what[0]}：暂时无法获取（{zh_reason}）。请稍后再试，以下建议基于其余信息。",
        f"{what[1]}: unavailable right now ({en_reason}); the rest of this answer does without it.",
    )
