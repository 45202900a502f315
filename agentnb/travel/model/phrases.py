# ruff: noqa: E501  (Chinese and English sentences side by side)
"""The phrase table of TravelModel's questions, reasoning and answer extras: key -> (zh, en).

``say(key, language, **fields)`` fills one phrase. Reasoning lines (``r_*``) go into the
reply's ``reasoning_content``, each after the name of the rule that produced it.
"""

from __future__ import annotations

from typing import Any

__all__ = ["PHRASES", "say"]

PHRASES: dict[str, tuple[str, str]] = {
    # questions asked before any call
    "ask_vague": ("请问具体是哪一天？「{vague}」没有指明日期，我不想替你猜一个（例如：1月20日、下周五、后天）。",
                  "Which day exactly? '{vague}' does not name a day, and I would rather not guess one (for example: January 20, next Friday, the day after tomorrow)."),
    "ask_day_flight": ("请问哪天出发？告诉我日期（例如 周五 或 1月10日）我再帮你查。",
                       "Which day do you leave? Tell me the date (e.g. Friday or January 10)."),
    "ask_day_hotel": ("请问哪天入住？告诉我日期（例如 周五 或 1月10日）我再帮你查。",
                      "Which day do you check in? Tell me the date (e.g. Friday or January 10)."),
    "ask_all": ("开始查询前请一并告诉我：{what}？", "Before I search, please tell me: {what}?"),
    "slot_names": ("从哪个城市出发|去哪个城市|哪天出发|住几晚|哪天入住",
                   "where you leave from|where you are going|which day you leave|how many nights|which day you check in"),
    "ask_calendar": ("「{day}」具体是几月几号？请告诉我日期（例如 1月10日），我再帮你查。",
                     "Which calendar date is '{day}'? Tell me the date (e.g. January 10) and I will search."),
    # answer extras
    "assumed_day": ("（未说明日期，按{day}计。）", "(No day given: I assumed {day}.)"),
    "budget_stop": ("预算不够，我先停在这里：要调整预算、日期或住宿晚数吗？", "That is over budget, so I stop here: shall we change the budget, the dates or the nights?"),
    "booking_ask": ("需要我为你预订吗？预订前我会先和你确认。", "Shall I book it? I will confirm with you before booking."),
    "booking_direct": ("我没有预订工具，无法直接预订；以上是推荐的选择。", "I have no booking tool, so I cannot book it; the above is what I recommend."),
    "table_head": ("| 项目 | 内容 |\n|---|---|", "| item | detail |\n|---|---|"),
    "unknown_city": ("抱歉，数据中没有{names}的信息，无法提供这个城市的航班、天气或酒店；我不会编造数据。可查询的城市有：{known}。", "Sorry, the data has nothing for {names}, so I cannot give flights, weather or hotels there, and I will not make them up. Cities I know: {known}."),
    "which_city": ("请问您想查询其中哪个城市？", "Which of these cities would you like instead?"),
    "noted_origin": ("好的，记下了：从{origin}出发。请告诉我目的地和日期。", "Noted: leaving from {origin}. Where to, and on which day?"),
    "who_am_i": ("我是差旅助手（一个确定性的示例模型，不是大模型）：可以帮你查询航班、天气和酒店，并计算行程预算。请告诉我出发地、目的地、日期和预算，例如「我周五从上海去北京出差，预算3000以内」。", "I am a travel assistant (a deterministic example model, not an LLM): I look up flights, weather and hotels and check the budget. Tell me where from, where to, when, and your budget."),
    "unused_result": ("另外，{name} 返回了结果，但我不知道它是做什么的，没有使用（结果中有：{seen}）。", "{name} also returned a result, but I do not know what it is for, so I did not use it (it says: {seen})."),
    "found_nothing": ("抱歉，我没能查到任何信息。", "Sorry, I could not find anything."),
    "not_looked_up": ("{what}：未查询。", "{what}: not looked up."),
    "not_looked_up_stopped": ("{what}：未查询（在调用次数上限前没有查到）。", "{what}: not looked up (the call limit was reached first)."),
    # the answer's sections (write: sections.py fills them in the answer's language)
    "ask_origin": ("航班：请问从哪个城市出发去{to}？告诉我出发城市，我再帮你查航班。", "Flights: which city do you leave from for {to}? Tell me, and I will search."),
    "ask_destination": ("航班：请问从{since}去哪个城市？告诉我目的地，我再帮你查航班。", "Flights: where do you fly to from {since}? Tell me, and I will search."),
    "ask_route": ("航班：请告诉我出发城市和目的地，我再帮你查航班。", "Flights: tell me where you leave from and where you go, and I will search."),
    "no_flight": ("航班：{origin}→{destination} {when}没有可订的航班（{note}）。", "Flights: nothing bookable from {origin} to {destination} on {when} ({note})."),
    "flight": ("{head}{no}（{airline}），{when}{dep_time} 从{dep}起飞，{arr_time} 到达{arr}，票价 {price} 元（余票 {seats} 张）。", "{head}{no} ({airline}), {when}, departs {dep} {dep_time}, arrives {arr} {arr_time}, {price} CNY ({seats} seats left)."),
    "flight_head": ("航班：推荐 ", "Flight: "),
    "also_cheapest": ("当天共 {count} 个航班，它也是最低价。", "It is also the cheapest of {count} flights that day."),
    "cheapest_is": ("当天共 {count} 个航班，最低价为 {no}（{time}，{price} 元）。", "{count} flights that day; the cheapest is {no} ({time}, {price} CNY)."),
    "ask_weather_city": ("天气：请告诉我要查哪个城市的天气。", "Weather: which city should I look up?"),
    "no_weather": ("天气：{city} {when} 暂无天气数据。", "Weather: no weather data for {city} on {when}."),
    "weather": ("天气：{city} {when}{condition}，{low}～{high}°C，降水概率 {rain:.0%}{advice}。", "Weather: {city} on {when}: {condition}, {low} to {high} °C, {rain:.0%} chance of rain{advice}."),
    "advice_join": ("，|，", "; |, "),
    "freezing": ("气温在零度以下，注意保暖", "below freezing, dress warmly"),
    "umbrella": ("建议带伞", "take an umbrella"),
    "ask_hotel_city": ("酒店：请告诉我要住在哪个城市。", "Hotel: in which city?"),
    "no_hotel": ("酒店：{city} {when}没有可订的酒店（{note}）。", "Hotel: nothing available in {city} on {when} ({note})."),
    "hotel": ("酒店：{day}{name}（{district}·{landmark}，评分 {rating}{near}），{per_night} 元/晚 × {nights} 晚 = {total} 元{estimate}。", "Hotel: {day}{name} ({landmark}, rating {rating}{near}), {per_night} CNY/night × {nights} = {total} CNY{estimate}."),
    "hotel_near": ("，距{landmark} {km} 公里", ", {km} km from {landmark}"),
    "hotel_day": ("{when}入住，", "check-in {when}, "),
    "first_night_rate": ("（按入住当晚价格估算）", " (estimated at the first night's rate)"),
    "night_by_night": ("（逐晚价格 {each}）", " (night by night: {each})"),
    "one_night": ("（未说明住几晚，按 1 晚计）", " (no number of nights given: 1 night)"),
    "also_available": ("其他可选：{hotels}。", "Also available: {hotels}."),
    "hotel_price": ("{name} {price} 元/晚", "{name} {price} CNY/night"),
    "list_join": ("；", "; "),
    "note": ("（{note}）", "({note})"),
    "unread_fare": ("不含机票（航班结果无法读取），", "without the flight (its result could not be read), "),
    "no_total": ("预算：还没有用工具算出总价{why}，暂不下结论。", "Budget: the total has not been calculated with the tool{why}, so no verdict."),
    "no_total_yet": ("", " yet"),
    "no_total_stopped": ("（调用次数已到上限）", " (the call limit was reached first)"),
    "cost_total": ("费用：{lead}{parts} = 合计 {total} 元。", "Cost: {lead}{parts} = {total} CNY in total."),
    "within_budget": ("预算：{lead}{parts} = 合计 {total} 元，在 {budget} 元预算内（剩余 {left} 元）。", "Budget: {lead}{parts} = {total} CNY, within your {budget} CNY budget ({left} CNY to spare)."),
    "over_budget": ("预算：{lead}{parts} = 合计 {total} 元，超出 {budget} 元预算 {over} 元。", "Budget: {lead}{parts} = {total} CNY, {over} CNY over your {budget} CNY budget."),
    "no_cheaper": ("没有更便宜的组合可选，建议调整日期或减少住宿晚数。", "There is no cheaper combination; consider another date or fewer nights."),
    "alternative_fits": ("备选方案：{labels}，合计 {total} 元，在预算内（剩余 {left} 元）。", "Alternative: {labels}, {total} CNY in total, within budget ({left} CNY to spare)."),
    "alternative_over": ("备选方案：即使选择最便宜的组合（{labels}）也需 {total} 元，仍超出预算 {over} 元；建议调整日期、减少住宿晚数或提高预算。", "Alternative: even the cheapest combination ({labels}) costs {total} CNY, still {over} CNY over; consider another date, fewer nights or a larger budget."),
    "labels_join": ("、", ", "),
    # reasoning: reading
    "r_today": ("今天是 {today}（{today_wd}），{word} → {day}（{wd}）", "today is {today} ({today_wd}), {word} → {day} ({wd})"),
    "r_iso": ("{tool} 的日期参数要 YYYY-MM-DD → 发送 {day}", "{tool}'s date parameter asks for YYYY-MM-DD → send {day}"),
    "r_relative": ("{tool} 接受相对日期 → 原样发送「{word}」，由工具换算", "{tool} accepts relative dates → send '{word}' as written; the tool resolves it"),
    "r_iso_knob": ("指令要求 YYYY-MM-DD → 给 {tool} 发送 {day}", "the instructions ask for YYYY-MM-DD → send {day} to {tool}"),
    "r_relative_knob": ("指令要求保留相对日期 → 给 {tool} 发送「{word}」", "the instructions say keep relative dates → send '{word}' to {tool}"),
    "r_wants": ("用户要：{wants}", "the user wants: {wants}"),
    "r_not_understood": ("有 {n} 行指令没读懂（见 understood()）：{first}", "{n} instruction line(s) not understood (see understood()): {first}"),
    # reasoning: deciding
    "r_ask": ("缺少{what} → 先问用户，不调用工具", "missing {what} → ask the user first, no tool call"),
    "r_ask_all": ("缺少{what} → 指令要求一次问清 → 一起问", "missing {what} → the instructions say ask everything at once"),
    "r_assume": ("未说明日期 → 指令让我按默认值：{day}", "no day given → the instructions say assume a default: {day}"),
    "r_vague": ("「{vague}」不是具体哪一天 → 先问", "'{vague}' names no single day → ask first"),
    "r_calendar": ("指令要求具体日期，「{day}」是相对说法 → 先问", "the instructions want a calendar date, '{day}' is relative → ask"),
    "r_calls": ("还没查到：{need} → 调用 {calls}", "not looked up yet: {need} → call {calls}"),
    "r_serial": ("一次只发一个调用（article 000 的表）→ 先 {first}，其余下一轮", "one call per reply (article 000's table) → {first} now, the rest next turn"),
    "r_parallel": ("可以并行 → 这一轮同时发出 {n} 个调用", "parallel calls allowed → {n} calls in this reply"),
    "r_confirm": ("指令没说「不要重复查询」→ 再查一次 {tool} 以确认", "nothing says 'do not repeat' → search {tool} once more to confirm"),
    "r_retry": ("{tool} 失败（{kind}）→ 重试一次", "{tool} failed ({kind}) → retry once"),
    "r_next_day": ("{tool} 当天不可用 → 指令要求给出建议 → 查次日 {day}", "{tool} is unavailable that day → the instructions ask for advice → look up the next day, {day}"),
    "r_cost": ("价格都有了 → 用 {tool} 算总价：{parts}", "all prices known → {tool} adds them up: {parts}"),
    "r_alternative": ("超出预算，指令要求备选方案 → 再算最便宜的组合：{parts}", "over budget and the instructions want an alternative → price the cheapest combination: {parts}"),
    "r_final": ("需要的信息都有了（{used}）→ 给出最终回答", "everything needed is in ({used}) → final answer"),
    "r_final_nothing": ("没有需要查询的内容 → 直接回答", "nothing to look up → answer directly"),
    "r_no_tools": ("指令不让调用工具 → 不查询，也不编造", "the instructions forbid tools → no lookup, nothing invented"),
    "r_memory": ("没有要求先用工具 → 凭“记忆”直接回答（数字是编的）", "nothing demands tools first → answer 'from memory' (the figures are invented)"),
    "r_unknown_city": ("数据里没有「{city}」→ 如实说明并询问", "the data has no '{city}' → say so and ask"),
    "r_misbehave": ("故意的失误（misbehave={mode}）：{what}", "a deliberate pitfall (misbehave={mode}): {what}"),
    # reasoning: the facts behind the answer
    "r_flight_earliest": ("最早的有票航班 → {flight}（{time}，{price} 元）；最便宜的是 {cheap}（{cheap_price} 元）", "the earliest flight with seats → {flight} ({time}, {price} CNY); the cheapest is {cheap} ({cheap_price} CNY)"),
    "r_flight_cheapest": ("{why} → 选最便宜的 {flight}（{price} 元），而不是最早的 {other}", "{why} → the cheapest, {flight} ({price} CNY), not the earliest, {other}"),
    "r_flight_latest": ("指令要最晚的航班 → {flight}（{time}）", "the instructions want the latest flight → {flight} ({time})"),
    "r_flight_budget": ("预算内优先 → {flight}（{price} 元；机票最多可花 {room} 元）", "within budget first → {flight} ({price} CNY; the fare may cost up to {room} CNY)"),
    "r_hotel_value": ("价格较低的一半里评分最高 → {hotel}（{price} 元，评分 {rating}）；最便宜的是 {cheap}（{cheap_price} 元）", "best rated of the cheaper half → {hotel} ({price} CNY, rating {rating}); the cheapest is {cheap} ({cheap_price} CNY)"),
    "r_hotel_near": ("用户提到{near} → 选离得最近的 {hotel}（{km} 公里）", "the user named {near} → the closest, {hotel} ({km} km)"),
    "r_hotel_cheapest": ("{why} → 选 {price} 元的{hotel}，而不是评分更高的{other}", "{why} → {hotel} at {price} CNY, not the better-rated {other}"),
    "r_hotel_rated": ("指令要评分最高的 → {hotel}（评分 {rating}，{price} 元）", "the instructions want the best rated → {hotel} (rating {rating}, {price} CNY)"),
    "r_hotel_budget": ("预算内评分最高 → {hotel}（{price} 元，可用 {room} 元）", "best rated within budget → {hotel} ({price} CNY of {room} CNY left)"),
    "why_user": ("用户要便宜的", "the user wants it cheap"),
    "why_budget": ("用户给了预算", "the user gave a budget"),
    "why_rule": ("指令要最便宜的", "the instructions want the cheapest"),
    "r_total": ("{parts} = {total}，预算 {budget} → {verdict}", "{parts} = {total}, budget {budget} → {verdict}"),
    "within": ("在预算内", "within budget"),
    "over": ("超出预算", "over budget"),
    "r_slip": ("（失误，temperature={t}）{what}", "(a slip, temperature={t}) {what}"),
    "slip_date_format": ("把日期写成了 {value}", "wrote the date as {value}"),
    "slip_forget_tool": ("还没查{what}就直接回答了", "answered before looking up the {what}"),
    "slip_repeat_call": ("又调用了一次 {tool}，参数和上次一样", "called {tool} again with the same arguments"),
    "slip_misread_budget": ("把预算 {budget} 读成了 {misread}", "read the budget {budget} as {misread}"),
    "slip_ignore_preference": ("没有照{knob}={how}选，用了默认的选择", "ignored {knob}={how} and chose by default"),
}  # fmt: skip


def say(key: str, language: str, **fields: Any) -> str:
    """The phrase ``key`` in ``language`` ("zh" or "en"), with ``fields`` filled in."""
    zh, en = PHRASES[key]
    return (zh if language == "zh" else en).format(**fields)
