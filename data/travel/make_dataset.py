"""Rebuild the travel dataset from the hand-written tables below (deterministic).

    python data/travel/make_dataset.py            # rewrites the CSV files beside this script
    python data/travel/make_dataset.py OUT_DIR    # writes them to OUT_DIR instead

Every value comes from the tables in this file and a seeded random generator, so the files
are reproducible byte for byte. The figures of article 000's walkthrough are pinned:
MU5101 上海虹桥→北京首都 08:00–10:15 at 880 CNY on 2025-01-10, 北京 晴 -3~5°C that day,
and the 汉庭 / 如家 / 全季 (520 CNY) hotels in 北京.
"""

from __future__ import annotations

import csv
import math
import random
import sys
from datetime import date, timedelta
from pathlib import Path

HERE = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent
START = date(2025, 1, 6)  # a Monday; 周五 = 2025-01-10 as in article 000
DAYS = 28

# city, English name, aliases, province, lat, lon, airports [(code, name, name_en)]
CITIES = [
    ("上海", "Shanghai", "沪", "上海", 31.23, 121.47,
     [("SHA", "上海虹桥", "Shanghai Hongqiao"), ("PVG", "上海浦东", "Shanghai Pudong")]),
    ("北京", "Beijing", "京;Peking", "北京", 39.90, 116.41,
     [("PEK", "北京首都", "Beijing Capital"), ("PKX", "北京大兴", "Beijing Daxing")]),
    ("杭州", "Hangzhou", "", "浙江", 30.27, 120.16, [("HGH", "杭州萧山", "Hangzhou Xiaoshan")]),
    ("广州", "Guangzhou", "Canton", "广东", 23.13, 113.26, [("CAN", "广州白云", "Guangzhou Baiyun")]),
    ("深圳", "Shenzhen", "", "广东", 22.54, 114.06, [("SZX", "深圳宝安", "Shenzhen Bao'an")]),
    ("成都", "Chengdu", "蓉", "四川", 30.57, 104.07,
     [("TFU", "成都天府", "Chengdu Tianfu"), ("CTU", "成都双流", "Chengdu Shuangliu")]),
    ("西安", "Xi'an", "Xian", "陕西", 34.34, 108.94, [("XIY", "西安咸阳", "Xi'an Xianyang")]),
    ("南京", "Nanjing", "", "江苏", 32.06, 118.80, [("NKG", "南京禄口", "Nanjing Lukou")]),
    ("武汉", "Wuhan", "", "湖北", 30.59, 114.31, [("WUH", "武汉天河", "Wuhan Tianhe")]),
    ("重庆", "Chongqing", "渝", "重庆", 29.56, 106.55, [("CKG", "重庆江北", "Chongqing Jiangbei")]),
    ("厦门", "Xiamen", "Amoy", "福建", 24.48, 118.09, [("XMN", "厦门高崎", "Xiamen Gaoqi")]),
    ("昆明", "Kunming", "", "云南", 25.04, 102.71, [("KMG", "昆明长水", "Kunming Changshui")]),
    ("青岛", "Qingdao", "Tsingtao", "山东", 36.07, 120.38, [("TAO", "青岛胶东", "Qingdao Jiaodong")]),
    ("长沙", "Changsha", "", "湖南", 28.23, 112.94, [("CSX", "长沙黄花", "Changsha Huanghua")]),
]

# Pairs too close for a commercial flight (high-speed rail instead): no flights in either way.
NO_FLIGHTS = {frozenset(p) for p in [("上海", "杭州"), ("上海", "南京"), ("杭州", "南京")]}
BUSY = {frozenset(p): n for p, n in [
    (("上海", "北京"), 6), (("北京", "广州"), 4), (("上海", "广州"), 4), (("上海", "深圳"), 4),
    (("北京", "深圳"), 4), (("北京", "成都"), 3), (("上海", "成都"), 3), (("北京", "杭州"), 3),
]}
AIRLINES = [("MU", "中国东方航空"), ("CA", "中国国际航空"), ("CZ", "中国南方航空"),
            ("HU", "海南航空"), ("MF", "厦门航空"), ("3U", "四川航空"), ("FM", "上海航空"),
            ("ZH", "深圳航空"), ("HO", "吉祥航空"), ("9C", "春秋航空")]
HOME = {"上海": ["MU", "FM", "HO", "9C"], "北京": ["CA", "HU"], "广州": ["CZ"], "深圳": ["ZH", "CZ"],
        "成都": ["3U", "CA"], "厦门": ["MF"], "昆明": ["MU"], "西安": ["MU", "HU"], "重庆": ["CA", "3U"]}
SLOTS = ["07:00", "07:35", "08:00", "09:10", "10:30", "11:45", "13:05", "14:20", "15:40",
         "17:00", "18:25", "19:50", "21:10"]
PINNED_FLIGHTS = [  # article 000 §4.2
    ("上海", "北京", "MU5101", "MU", "SHA", "PEK", "08:00", "10:15", {date(2025, 1, 10): 880}),
    ("上海", "北京", "CA1858", "CA", "SHA", "PEK", "10:30", "12:45", {date(2025, 1, 10): 1150}),
]

# January climate: (min °C, max °C, weights for conditions)
CONDITIONS = [("晴", "sunny", 0.0), ("多云", "cloudy", 0.1), ("阴", "overcast", 0.2),
              ("小雨", "light rain", 0.7), ("中雨", "moderate rain", 0.9),
              ("小雪", "light snow", 0.7), ("雾", "fog", 0.1), ("霾", "haze", 0.05)]
CLIMATE = {
    "上海": (3, 9, [3, 4, 4, 3, 1, 0, 1, 0]), "北京": (-6, 3, [6, 3, 1, 0, 0, 1, 0, 1]),
    "杭州": (2, 9, [3, 4, 4, 4, 1, 0, 1, 0]), "广州": (11, 19, [5, 4, 2, 2, 0, 0, 1, 0]),
    "深圳": (12, 20, [5, 4, 2, 1, 0, 0, 1, 0]), "成都": (3, 10, [1, 3, 6, 2, 0, 0, 2, 1]),
    "西安": (-3, 6, [4, 3, 2, 0, 0, 1, 1, 2]), "南京": (0, 8, [4, 4, 3, 2, 0, 1, 1, 0]),
    "武汉": (1, 9, [3, 4, 3, 2, 0, 1, 1, 0]), "重庆": (6, 11, [1, 2, 7, 2, 0, 0, 2, 0]),
    "厦门": (10, 18, [5, 4, 2, 1, 0, 0, 0, 0]), "昆明": (3, 16, [8, 3, 1, 0, 0, 0, 0, 0]),
    "青岛": (-3, 5, [5, 3, 2, 0, 0, 1, 1, 0]), "长沙": (2, 9, [2, 4, 4, 3, 1, 0, 1, 0]),
}
PINNED_WEATHER = {("北京", date(2025, 1, 10)): ("晴", -3, 5, 0.0),
                  ("杭州", date(2025, 1, 11)): ("晴", 4, 12, 0.0)}

# city -> hotels: (name, English name, brand, district, landmark, km to landmark, price, rating)
HOTELS = {
    "北京": [("汉庭酒店(北京王府井店)", "Hanting Wangfujing", "汉庭", "东城区", "王府井", 0.4, 300, 4.3),
           ("如家酒店(北京前门店)", "Home Inn Qianmen", "如家", "东城区", "前门", 0.6, 280, 4.2),
           ("全季酒店(北京国贸店)", "JI Hotel Guomao", "全季", "朝阳区", "国贸", 0.5, 520, 4.6),
           ("亚朵酒店(北京三里屯店)", "Atour Sanlitun", "亚朵", "朝阳区", "三里屯", 0.3, 650, 4.7),
           ("北京饭店", "Beijing Hotel", "北京饭店", "东城区", "天安门", 1.0, 1200, 4.8)],
    "上海": [("汉庭酒店(上海人民广场店)", "Hanting People's Square", "汉庭", "黄浦区", "人民广场", 0.5, 320, 4.3),
           ("全季酒店(上海外滩店)", "JI Hotel The Bund", "全季", "黄浦区", "外滩", 0.7, 560, 4.6),
           ("亚朵酒店(上海陆家嘴店)", "Atour Lujiazui", "亚朵", "浦东新区", "陆家嘴", 0.6, 680, 4.7),
           ("和平饭店", "Fairmont Peace Hotel", "和平饭店", "黄浦区", "外滩", 0.1, 1800, 4.9)],
    "杭州": [("西湖边精品酒店A", "West Lake Boutique A", "精品", "西湖区", "西湖", 0.5, 500, 4.7),
           ("湖滨酒店B", "Hubin Hotel B", "精品", "上城区", "西湖", 1.0, 400, 4.5),
           ("全季酒店(杭州西湖店)", "JI Hotel West Lake", "全季", "上城区", "西湖", 2.0, 300, 4.4),
           ("如家酒店(杭州东站店)", "Home Inn Hangzhou East", "如家", "上城区", "杭州东站", 0.3, 220, 4.1)],
    "广州": [("汉庭酒店(广州北京路店)", "Hanting Beijing Road", "汉庭", "越秀区", "北京路", 0.3, 260, 4.2),
           ("全季酒店(广州珠江新城店)", "JI Hotel Zhujiang New Town", "全季", "天河区", "珠江新城", 0.5, 480, 4.6),
           ("广州白天鹅宾馆", "White Swan Hotel", "白天鹅", "荔湾区", "沙面", 0.2, 1300, 4.8)],
    "深圳": [("如家酒店(深圳福田店)", "Home Inn Futian", "如家", "福田区", "会展中心", 0.8, 290, 4.2),
           ("亚朵酒店(深圳南山科技园店)", "Atour Nanshan Science Park", "亚朵", "南山区", "科技园", 0.4, 620, 4.7),
           ("全季酒店(深圳华强北店)", "JI Hotel Huaqiangbei", "全季", "福田区", "华强北", 0.3, 450, 4.5)],
    "成都": [("汉庭酒店(成都春熙路店)", "Hanting Chunxi Road", "汉庭", "锦江区", "春熙路", 0.4, 240, 4.3),
           ("全季酒店(成都宽窄巷子店)", "JI Hotel Kuanzhai Alley", "全季", "青羊区", "宽窄巷子", 0.5, 420, 4.6),
           ("成都博舍", "The Temple House", "博舍", "锦江区", "太古里", 0.2, 1600, 4.9)],
    "西安": [("如家酒店(西安钟楼店)", "Home Inn Bell Tower", "如家", "碑林区", "钟楼", 0.3, 230, 4.2),
           ("全季酒店(西安大雁塔店)", "JI Hotel Big Wild Goose Pagoda", "全季", "雁塔区", "大雁塔", 0.6, 400, 4.6),
           ("西安索菲特人民大厦", "Sofitel Xi'an", "索菲特", "新城区", "新城广场", 0.4, 900, 4.7)],
    "南京": [("汉庭酒店(南京新街口店)", "Hanting Xinjiekou", "汉庭", "秦淮区", "新街口", 0.3, 250, 4.3),
           ("全季酒店(南京夫子庙店)", "JI Hotel Confucius Temple", "全季", "秦淮区", "夫子庙", 0.4, 430, 4.6),
           ("南京金陵饭店", "Jinling Hotel", "金陵饭店", "鼓楼区", "新街口", 0.1, 980, 4.8)],
    "武汉": [("如家酒店(武汉江汉路店)", "Home Inn Jianghan Road", "如家", "江汉区", "江汉路", 0.3, 220, 4.2),
           ("全季酒店(武汉黄鹤楼店)", "JI Hotel Yellow Crane Tower", "全季", "武昌区", "黄鹤楼", 0.7, 390, 4.6),
           ("亚朵酒店(武汉光谷店)", "Atour Optics Valley", "亚朵", "洪山区", "光谷", 0.5, 520, 4.7)],
    "重庆": [("汉庭酒店(重庆解放碑店)", "Hanting Jiefangbei", "汉庭", "渝中区", "解放碑", 0.4, 230, 4.3),
           ("全季酒店(重庆洪崖洞店)", "JI Hotel Hongyadong", "全季", "渝中区", "洪崖洞", 0.3, 410, 4.6),
           ("重庆来福士洲际酒店", "InterContinental Raffles City", "洲际", "渝中区", "朝天门", 0.2, 1100, 4.8)],
    "厦门": [("如家酒店(厦门中山路店)", "Home Inn Zhongshan Road", "如家", "思明区", "中山路", 0.3, 260, 4.2),
           ("全季酒店(厦门鼓浪屿码头店)", "JI Hotel Gulangyu Ferry", "全季", "思明区", "鼓浪屿", 0.8, 460, 4.6),
           ("厦门康莱德酒店", "Conrad Xiamen", "康莱德", "思明区", "环岛路", 1.2, 1250, 4.8)],
    "昆明": [("汉庭酒店(昆明翠湖店)", "Hanting Green Lake", "汉庭", "五华区", "翠湖", 0.5, 210, 4.3),
           ("全季酒店(昆明南屏街店)", "JI Hotel Nanping Street", "全季", "五华区", "南屏街", 0.3, 380, 4.6),
           ("昆明洲际酒店", "InterContinental Kunming", "洲际", "西山区", "滇池", 0.4, 850, 4.7)],
    "青岛": [("如家酒店(青岛栈桥店)", "Home Inn Zhanqiao Pier", "如家", "市南区", "栈桥", 0.4, 230, 4.2),
           ("全季酒店(青岛五四广场店)", "JI Hotel May Fourth Square", "全季", "市南区", "五四广场", 0.5, 420, 4.6),
           ("青岛香格里拉大酒店", "Shangri-La Qingdao", "香格里拉", "市南区", "五四广场", 0.6, 950, 4.8)],
    "长沙": [("汉庭酒店(长沙五一广场店)", "Hanting Wuyi Square", "汉庭", "天心区", "五一广场", 0.3, 220, 4.3),
           ("全季酒店(长沙橘子洲店)", "JI Hotel Orange Isle", "全季", "岳麓区", "橘子洲", 0.8, 380, 4.6),
           ("长沙君悦酒店", "Grand Hyatt Changsha", "君悦", "开福区", "湘江", 0.3, 880, 4.8)],
}
LANDMARK_EN = {"西湖": "West Lake", "外滩": "The Bund", "王府井": "Wangfujing", "天安门": "Tiananmen",
               "国贸": "Guomao", "前门": "Qianmen", "会展中心": "Convention Center", "科技园": "Science Park", "太古里": "Taikoo Li", "新城广场": "Xincheng Square", "新街口": "Xinjiekou", "江汉路": "Jianghan Road", "光谷": "Optics Valley", "解放碑": "Jiefangbei", "朝天门": "Chaotianmen", "中山路": "Zhongshan Road", "环岛路": "Huandao Road", "南屏街": "Nanping Street", "五四广场": "May Fourth Square", "五一广场": "Wuyi Square", "湘江": "Xiang River", "北京路": "Beijing Road", "珠江新城": "Zhujiang New Town", "沙面": "Shamian", "华强北": "Huaqiangbei", "杭州东站": "Hangzhou East Station", "三里屯": "Sanlitun", "陆家嘴": "Lujiazui", "人民广场": "People's Square",
               "大雁塔": "Big Wild Goose Pagoda", "钟楼": "Bell Tower", "鼓浪屿": "Gulangyu",
               "夫子庙": "Confucius Temple", "宽窄巷子": "Kuanzhai Alley", "春熙路": "Chunxi Road",
               "黄鹤楼": "Yellow Crane Tower", "洪崖洞": "Hongyadong", "翠湖": "Green Lake",
               "滇池": "Dianchi Lake", "栈桥": "Zhanqiao Pier", "橘子洲": "Orange Isle"}


def km(a: tuple, b: tuple) -> float:
    lat1, lon1, lat2, lon2 = map(math.radians, (a[4], a[5], b[4], b[5]))
    h = math.sin((lat2 - lat1) / 2) ** 2 + math.cos(lat1) * math.cos(lat2) * math.sin((lon2 - lon1) / 2) ** 2
    return 6371 * 2 * math.asin(math.sqrt(h))


def hhmm(minutes: int) -> str:
    return f"{minutes // 60 % 24:02d}:{minutes % 60:02d}"


def write(name: str, header: list[str], rows: list[list]) -> None:
    with (HERE / name).open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(header)
        w.writerows(rows)


def main() -> None:
    rng = random.Random(20250106)
    days = [START + timedelta(d) for d in range(DAYS)]
    write("cities.csv", ["city", "city_en", "aliases", "province", "lat", "lon", "airports"],
          [[c, en, al, prov, lat, lon, ";".join(f"{code}:{n}:{ne}" for code, n, ne in ap)]
           for c, en, al, prov, lat, lon, ap in CITIES])

    flights, used = [], set()
    pinned_routes = {(p[0], p[1]) for p in PINNED_FLIGHTS}
    for origin in CITIES:
        for dest in CITIES:
            if origin is dest or frozenset((origin[0], dest[0])) in NO_FLIGHTS:
                continue
            dist = km(origin, dest)
            minutes = round((dist / 780 * 60 + 40) / 5) * 5
            base = max(420, round(dist * 0.75 / 10) * 10)
            count = BUSY.get(frozenset((origin[0], dest[0])), 2 if dist > 900 else 1)
            carriers = HOME.get(origin[0], []) + HOME.get(dest[0], []) + ["MU", "CA", "CZ"]
            schedule = []
            if (origin[0], dest[0]) in pinned_routes:
                schedule = [p for p in PINNED_FLIGHTS if (p[0], p[1]) == (origin[0], dest[0])]
            taken = {p[6] for p in schedule}
            slots = sorted(rng.sample([s for s in SLOTS if s not in taken], count - len(schedule)))
            for slot in slots:
                airline = carriers[rng.randrange(len(carriers))]
                number = f"{airline}{rng.randrange(1000, 9900)}"
                while number in used:
                    number = f"{airline}{rng.randrange(1000, 9900)}"
                dep = origin[6][rng.randrange(len(origin[6]))][0]
                arr = dest[6][rng.randrange(len(dest[6]))][0]
                h, m = map(int, slot.split(":"))
                schedule.append((origin[0], dest[0], number, airline, dep, arr, slot,
                                 hhmm(h * 60 + m + minutes), {}))
            for o, d, number, airline, dep, arr, t_dep, t_arr, pins in schedule:
                used.add(number)
                fare = base * rng.uniform(0.85, 1.35)
                for day in days:
                    weekday = day.weekday()
                    factor = (1.15 if weekday in (4, 6) else 0.92 if weekday == 5 else 1.0) * rng.uniform(0.9, 1.12)
                    price = pins.get(day) or round(fare * factor / 10) * 10
                    seats = 0 if rng.random() < 0.06 else rng.randrange(1, 60)
                    if day in pins:
                        seats = max(seats, 12)
                    next_day = t_arr < t_dep
                    arrival_date = day + timedelta(1) if next_day else day
                    flights.append([number, dict(AIRLINES)[airline], o, d, dep, arr, day.isoformat(),
                                    t_dep, arrival_date.isoformat(), t_arr, price, seats])
    flights.sort(key=lambda r: (r[6], r[2], r[3], r[7]))
    write("flights.csv", ["flight_no", "airline", "from_city", "to_city", "from_airport", "to_airport",
                          "date", "departure_time", "arrival_date", "arrival_time", "price_cny", "seats_left"],
          flights)

    weather = []
    for city in CITIES:
        low, high, weights = CLIMATE[city[0]]
        for day in days:
            pinned = PINNED_WEATHER.get((city[0], day))
            if pinned:
                cond, tmin, tmax, precip = pinned
                en = dict((c[0], c[1]) for c in CONDITIONS)[cond]
            else:
                cond, en, p = rng.choices(CONDITIONS, weights=weights)[0]
                if cond == "小雪" and high > 6:
                    cond, en, p = "小雨", "light rain", 0.7
                tmin = low + rng.randint(-3, 3)
                tmax = max(tmin + 3, high + rng.randint(-3, 3) - (2 if p >= 0.7 else 0))
                precip = round(min(1.0, max(0.0, p + rng.uniform(-0.1, 0.1))), 2)
            weather.append([city[0], day.isoformat(), cond, en, tmin, tmax, precip])
    write("weather.csv", ["city", "date", "condition", "condition_en", "temp_min_c", "temp_max_c",
                          "precip_prob"], weather)

    hotels, availability = [], []
    for city, rows in HOTELS.items():
        for i, (name, name_en, brand, district, landmark, dist, price, rating) in enumerate(rows, 1):
            hotel_id = f"{dict((c[0], c[1]) for c in CITIES)[city][:3].upper()}-{i:02d}"
            hotels.append([hotel_id, city, name, name_en, brand, district, landmark,
                           LANDMARK_EN.get(landmark, ""), dist, price, rating])
            for day in days:
                weekend = day.weekday() in (4, 5)
                nightly = round(price * (1.1 if weekend else 1.0) / 10) * 10
                if city == "北京" and day == date(2025, 1, 10):
                    nightly = price  # article 000: 全季 520 that night
                rooms = 0 if rng.random() < 0.08 else rng.randrange(1, 25)
                if (city, day) in {("北京", date(2025, 1, 10)), ("杭州", date(2025, 1, 11))}:
                    rooms = max(rooms, 5)
                availability.append([hotel_id, day.isoformat(), rooms, nightly])
    write("hotels.csv", ["hotel_id", "city", "name", "name_en", "brand", "district", "landmark",
                         "landmark_en", "distance_km", "base_price_cny", "rating"], hotels)
    write("hotel_availability.csv", ["hotel_id", "date", "rooms_left", "price_cny"], availability)
    print(f"{len(CITIES)} cities, {len(flights)} flight-days, {len(weather)} weather rows, "
          f"{len(hotels)} hotels, {len(availability)} availability rows")


if __name__ == "__main__":
    main()
