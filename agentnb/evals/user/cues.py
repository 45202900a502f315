# ruff: noqa: E501  (Chinese and English cues side by side)
"""What the rule-based user reads and says: its cues and phrases, as data (zh and en).

* :data:`SLOT_CUES` - words that make a question ask for a slot: ``date`` (哪天, which day),
  ``origin`` (出发地, where from), ``destination``, ``city``, ``nights``, ``budget``,
  ``hotel``. The longest cue is read first and takes its words (哪个城市出发 is the origin, not
  a city); a fact named otherwise is asked for by its own name (``facts={"房型": ...}``).
* :data:`ASKING` - a sentence asks something: it ends in ？/? or holds a request (请告诉我,
  tell me); :data:`YES_NO` - it asks for a yes (需要我…吗, shall I).
* :data:`EXAMPLE` - an example inside a question (例如 周五, e.g. Friday) claims nothing.
* :data:`SAY` - the user's phrases; :data:`SLOT_SAY` - how it gives a fact of a slot
  (从上海出发, to Beijing); :data:`LABELS` - a slot's name in words (出发地, the origin).
* :data:`ALIASES` - a question for one slot answered by another fact (哪个城市: the
  destination when the user holds no ``city``).
"""

from __future__ import annotations

import re

__all__ = [
    "ALIASES",
    "ASKING",
    "EXAMPLE",
    "LABELS",
    "SAY",
    "SLOT_CUES",
    "SLOT_SAY",
    "WEEKDAYS",
    "YES_NO",
]

#: slot -> the words that ask for it (Chinese and English), read longest first.
SLOT_CUES: dict[str, tuple[str, ...]] = {
    "origin": (
        "从哪个城市出发",
        "哪个城市出发",
        "从哪里出发",
        "从哪出发",
        "出发城市",
        "出发地",
        "which city do you leave from",
        "where you leave from",
        "where do you leave from",
        "leaving from",
        "where from",
        "departure city",
        "origin",
    ),
    "destination": (
        "去哪个城市",
        "飞哪个城市",
        "到哪个城市",
        "去哪里",
        "去哪儿",
        "目的地",
        "where do you fly to",
        "where you are going",
        "where are you going",
        "where you go",
        "where to",
        "destination",
    ),
    "date": (
        "几月几号",
        "哪一天",
        "哪天",
        "几号",
        "什么时候",
        "日期",
        "which day",
        "what day",
        "what date",
        "calendar date",
        "the date",
        "when",
    ),
    "nights": ("住几晚", "几晚", "多少晚", "住几天", "how many nights", "nights"),
    "city": (
        "哪个城市",
        "哪座城市",
        "什么城市",
        "哪个地方",
        "城市",
        "which city",
        "what city",
        "which of these cities",
        "in which city",
    ),
    "budget": ("预算", "多少钱以内", "budget", "how much"),
    "hotel": ("哪家酒店", "哪个酒店", "which hotel"),
}
#: A question for a slot the user holds no fact of, answered with another slot's fact.
ALIASES: dict[str, tuple[str, ...]] = {"city": ("destination",), "destination": ("city",)}

#: A sentence that asks: a question mark, or a request for something.
ASKING = re.compile(
    r"[？?]\s*$|请告诉我|告诉我|请问|请提供|麻烦(?:你)?告诉|能否告诉|一并告诉|"
    r"\btell me\b|\blet me know\b|\bplease provide\b|\bcould you (?:tell|give)\b|\bwhich\b|\bwhat\b.*\?",
    re.I,
)
#: A question that asks for a yes: a proposal to confirm.
YES_NO = re.compile(
    r"需要我.{0,12}吗|要不要|是否|要我.{0,12}吗|可以吗|好吗|确认.{0,8}吗|"
    r"\bshall i\b|\bshould i\b|\bdo you want me\b|\bwould you like me\b|\bwant me to\b|\bok to\b",
    re.I,
)
#: An example inside a question claims nothing: 例如 周五, e.g. Friday, for example: ...
EXAMPLE = re.compile(
    r"[（(「]?\s*(?:例如|比如|譬如|e\.g\.|for example|such as)[^）)」]*[）)」]?", re.I
)
#: Sentence ends.
SENTENCES = re.compile(r"[^。！？!?\n]+[。！？!?]?")

#: Weekday words, by day (Monday = 0), for reading a date an answer gives.
WEEKDAYS: dict[str, int] = {
    **{w: i for i, w in enumerate(["周一", "周二", "周三", "周四", "周五", "周六", "周日"])},
    **{f"星期{c}": i for i, c in enumerate("一二三四五六日")},
    **{
        w: i
        for i, w in enumerate(
            ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
        )
    },
    **{w: i for i, w in enumerate(["mon", "tue", "wed", "thu", "fri", "sat", "sun"])},
    "星期天": 6,
    "周末": 5,
}

#: slot -> (zh, en): how the user gives a fact of the slot ({v} is the fact).
SLOT_SAY: dict[str, tuple[str, str]] = {
    "origin": ("从{v}出发", "from {v}"),
    "destination": ("去{v}", "to {v}"),
    "budget": ("预算{v}", "my budget is {v}"),
}
#: slot -> (zh, en): the slot in words.
LABELS: dict[str, tuple[str, str]] = {
    "origin": ("出发地", "the origin"),
    "destination": ("目的地", "the destination"),
    "city": ("城市", "the city"),
    "date": ("日期", "the date"),
    "nights": ("入住晚数", "the number of nights"),
    "budget": ("预算", "the budget"),
    "hotel": ("酒店", "the hotel"),
}
#: The user's phrases: key -> (zh, en).
SAY: dict[str, tuple[str, str]] = {
    "dont_know": ("{what}我不知道。", "I don't know {what}."),
    "dont_know_any": ("这个我不知道。", "I don't know that."),
    "yes": ("好的，请{act}。", "Yes, please {act}."),
    "yes_book": ("预订", "book it"),
    "yes_plain": ("继续", "go ahead"),
    "done": ("好的，谢谢，就这样。", "Great, thanks, that's all."),
    "give_up": ("算了，我自己再想办法吧。", "Never mind, I'll sort it out myself."),
    "restate": ("我要的是：{goal}", "What I need is: {goal}"),
    "correct": ("不对，{what}是{v}。", "No, {what} is {v}."),
    "correct_place": ("不对，我说的是{v}。", "No, I meant {v}."),
    "change": ("我改主意了：{what}改成{v}。", "Change of plan: {what} is now {v}."),
    "join": ("，", ", "),
    "end": ("。", "."),
}
