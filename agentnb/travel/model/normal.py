"""Text as the stand-in reads it: one spelling for what people write several ways.

``normalise(text)`` keeps the length and the positions of ``text`` (so a match still points
at the words the user wrote) and changes only characters: full-width letters and digits to
ASCII (２０００ → 2000), curly apostrophes to straight ones (don’t → don't), and the
traditional characters of everyday travel talk to simplified ones (預算 → 预算; a table of
about 200, where cheap: not a converter). ``numerals(text)`` writes Chinese numbers as digits
(两千五 → 2500, 十八号 → 18号); it may change the length, so it is for reading slots only.
"""

from __future__ import annotations

import re

__all__ = ["chinese_number", "normalise", "numerals"]

_T2S_PAIRS = (
    "預预機机場场訂订飯饭說说話话請请問问題题語语簡简詳详細细週周氣气溫温號号時时間间點点們们個个會会"
    "這这對对為为與与無无論论應应該该給给選选擇择開开關关錢钱兩两萬万價价還还沒没過过長长達达從从飛飞"
    "車车報报確确認认總总計计費费單单張张幾几離离遠远較较優优實实據据錯错誤误試试嗎吗麼么廣广東东門门"
    "區区觀观導导遊游覽览樂乐歡欢種种類类務务當当網网條条體体樣样碼码讓让記记錄录顯显帶带員员雲云陰阴"
    "風风熱热涼凉廈厦慶庆連连續续結结詢询調调數数館馆賓宾評评貴贵後后頭头寫写盡尽內内範范圍围複复繼继"
    "漢汉國国際际專专業业準准則则鐘钟預预議议訊讯響响驗验證证識识護护擔担負负責责資资產产買买賣卖態态"
    "標标誌志語语言言僅仅並并嗎吗呢呢吧吧啊啊愛爱戶户處处見见視视覺觉親亲讀读變变邊边簽签單单雙双"
    "飛飞機机場场灣湾臺台區区縣县鄉乡鎮镇鐵铁鐵铁線线輛辆艙舱綫线戲戏紀纪錄录發发髮发雖虽歲岁"
    "幣币塊块餘余剩剩約约釐厘週周曆历鬧闹雜杂難难隨随隊队陸陆陽阳階阶際际隻只雞鸡頁页順顺須须預预"
    "領领頻频題题額额顏颜願愿類类風风飄飘飯饭飲饮館馆驚惊體体髮发鬥斗魚鱼鳥鸟鹽盐麥麦黃黄齊齐齒齿龍龙"
)
_T2S = {ord(_T2S_PAIRS[i]): _T2S_PAIRS[i + 1] for i in range(0, len(_T2S_PAIRS) - 1, 2)}
_WIDTH = {c: c - 0xFEE0 for c in (*range(0xFF10, 0xFF1A), *range(0xFF21, 0xFF3B),
                                  *range(0xFF41, 0xFF5B))}  # fmt: skip
_QUOTES = {0x2019: "'", 0x2018: "'", 0x3000: " "}
_TABLE: dict[int, int | str] = {**_T2S, **_WIDTH, **_QUOTES}


def normalise(text: str) -> str:
    """``text`` with one spelling per character (same length, same positions)."""
    return text.translate(_TABLE)


_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6,
           "七": 7, "八": 8, "九": 9}  # fmt: skip
_UNITS = {"十": 10, "百": 100, "千": 1000, "万": 10000}
_NUMBER = re.compile(r"[零〇一二两三四五六七八九十百千万]+")


def chinese_number(word: str) -> int | None:
    """两千五 → 2500, 一千五百 → 1500, 十八 → 18, 三 → 3; None when ``word`` is not one."""
    if not word or any(ch not in _DIGITS and ch not in _UNITS for ch in word):
        return None
    total = section = 0
    digit: int | None = None
    last_unit = 1
    for ch in word:
        if ch in _DIGITS:
            digit = _DIGITS[ch]
            continue
        unit = _UNITS[ch]
        if unit == 10000:
            total += (section + (digit or 0)) * unit
            section, digit, last_unit = 0, None, unit
            continue
        section += (1 if digit is None else digit) * unit
        digit, last_unit = None, unit
    if digit is not None:  # 两千五: the digit after a unit counts one unit lower
        section += digit * (last_unit // 10 if last_unit >= 100 and word[-2] in _UNITS else 1)
    return total + section


_EN_WORDS = {w: i for i, w in enumerate((
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen",
    "nineteen", "twenty"))}  # fmt: skip
_EN_NUMBER = re.compile(
    rf"\b({'|'.join(_EN_WORDS)})(?:\s+(thousand|hundred)(?:\s+(?:and\s+)?({'|'.join(_EN_WORDS)})"
    r"\s+hundred)?)?\b(?=\s+(?:nights?|thousand|hundred|yuan|rmb|cny|bucks|k\b)|\s*$|[\s,.;!?])",
    re.IGNORECASE,
)


def _english(m: re.Match[str]) -> str:
    value = _EN_WORDS[m.group(1).lower()]
    if m.group(2):
        value *= 1000 if m.group(2).lower() == "thousand" else 100
    if m.group(3):
        value += _EN_WORDS[m.group(3).lower()] * 100
    return str(value)


def numerals(text: str) -> str:
    """``text`` with each Chinese number written in digits (两千五百元 → 2500元, 十八号 → 18号,
    一月十九日 → 1月19日, 住三晚 → 住3晚), and English amounts and nights the same way (two
    thousand → 2000, fifteen hundred → 1500, three nights → 3 nights). Weekdays (周五) and words
    such as 一下, 一起, "one of" keep their characters."""

    def digits(m: re.Match[str]) -> str:
        word = m.group(0)
        after = text[m.end() : m.end() + 1]
        if text[max(0, m.start() - 2) : m.start()].endswith(("周", "星期", "礼拜")):
            return word  # 周五, 星期一: a weekday, not a number
        if len(word) == 1 and word in "一两二" and after not in "月号日千百万十块元晚个":
            return word  # 一下, 一起, 两人: not a quantity the stand-in reads
        value = chinese_number(word)
        return word if value is None else str(value)

    text = _NUMBER.sub(digits, text)
    return _EN_NUMBER.sub(lambda m: _english(m) if m.group(2) or _counts(text, m) else m.group(0),
                          text)  # fmt: skip


def _counts(text: str, m: re.Match[str]) -> bool:
    """A bare English number word counts nights ("three nights"), else it stays a word."""
    return bool(_NIGHTS_AFTER.match(text, m.end()))


_NIGHTS_AFTER = re.compile(r"\s++nights?\b", re.I)
