"""The one SSE framer (agentnb.models.sse) and the masking of what a stream carries across
its events (agentnb.models.masking): any cut of the bytes gives the same events, framing
is linear per byte, a credential split over events is in no event."""

from __future__ import annotations

import json
import time

from hypothesis import given, settings
from hypothesis import strategies as st

from agentnb._secrets import Secrets
from agentnb.models.masking import StreamMask, carried_text, mask_stream
from agentnb.models.sse import SSEFramer

KEY = "sk-live-ABCDEF0123456789xyz"


def frame(body: bytes, cuts: list[int]) -> list:
    framer, events, at = SSEFramer(), [], 0
    for cut in sorted(set(cuts)):
        events += framer.feed(body[at:cut])
        at = cut
    return events + framer.feed(body[at:]) + framer.close()


EVENTS = st.lists(
    st.tuples(
        st.sampled_from([None, "message_start", "response.output_text.delta"]),
        st.text(st.characters(blacklist_characters="\r\n", blacklist_categories=["Cs"])),
        st.sampled_from(["\n", "\r\n", "\r"]),
    ),
    max_size=8,
)


@settings(max_examples=200, deadline=None)
@given(events=EVENTS, cuts=st.lists(st.integers(0, 400), max_size=12))
def test_any_cut_of_the_bytes_gives_the_same_events_and_bytes(events, cuts):
    body = b""
    for name, data, end in events:
        head = f"event: {name}{end}" if name else ""
        body += f": a comment{end}{head}data: {data}{end}{end}".encode()
    whole = frame(body, [])
    assert [(e.name, e.data) for e in whole] == [(n, d) for n, d, _ in events]
    cut = frame(body, cuts)
    assert [(e.name, e.data) for e in cut] == [(e.name, e.data) for e in whole]
    assert b"".join(e.raw for e in cut) == body  # every byte kept, in order


def test_an_event_without_a_blank_line_after_it_still_comes_out_and_lines_join():
    events = frame(b'data: {"a":\ndata: 1}\n\nevent: x\ndata: last', [5, 13])
    assert [(e.name, e.data) for e in events] == [(None, '{"a":\n1}'), ("x", "last")]


def _framing_times(sizes: tuple[int, ...]) -> list[float]:
    """The least CPU time of five framings of one event of each size, fed in 16 KB pieces
    (the sizes interleaved; CPU time: other processes on the machine do not count)."""
    piece, best = 16 * 1024, [float("inf")] * len(sizes)
    bodies = [
        b'data: {"choices": [{"delta": {"content": "' + b"x" * s + b'"}}]}\n\n' for s in sizes
    ]
    for _ in range(5):
        for i, body in enumerate(bodies):
            framer = SSEFramer()
            start = time.process_time()
            for at in range(0, len(body), piece):
                framer.feed(body[at : at + piece])
            best[i] = min(best[i], time.process_time() - start)
    return best


def test_one_long_event_in_small_pieces_is_framed_in_linear_time():
    """The proxy's framer joined and searched its whole pending buffer on every piece: one
    long event cost 0.2 / 2.6 / 9.4 / 30.6 s at 2 / 8 / 16 / 30 MB (M6)."""
    small, big = _framing_times((2_000_000, 16_000_000))
    assert big <= 24 * max(small, 0.005), (small, big)


def _chunks(text: str, size: int) -> bytes:
    events = [{"choices": [{"index": 0, "delta": {"content": text[i : i + size]}}]}
              for i in range(0, len(text), size)]  # fmt: skip
    events.append({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    return b"".join(f"data: {json.dumps(e)}\n\n".encode() for e in events) + b"data: [DONE]\n\n"


@settings(max_examples=100, deadline=None)
@given(
    size=st.integers(1, 12),
    before=st.text(max_size=30).filter(lambda t: "\r" not in t),
    after=st.text(max_size=30).filter(lambda t: "\r" not in t),
)
def test_a_key_split_over_any_events_is_masked_and_the_rest_kept(size, before, after):
    secrets = Secrets([KEY])
    body = _chunks(f"{before}{KEY}{after}", size)
    masked = mask_stream(body, secrets)
    framer = SSEFramer()
    carried = carried_text(framer.feed(masked.encode()) + framer.close())
    assert KEY not in carried and f"{before}***{after}" in carried
    live, mask = [], StreamMask(secrets)  # event by event, as the proxy and client read
    framer = SSEFramer()
    for event in framer.feed(body):
        live += mask.feed(event)
    live += mask.close()
    assert b"".join(e.raw for e in live) == masked.encode()


def test_a_stream_with_nothing_to_mask_is_kept_byte_for_byte():
    body = _chunks("nothing secret here, 你好", 3) + b": bye\r\n"
    assert mask_stream(body, Secrets([KEY])).encode() == body
    assert mask_stream(body, Secrets()).encode() == body
