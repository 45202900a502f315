"""The one secrets rule (invariant 6): every credential registered once, masked everywhere.

A client registers each credential it is given, however it came: the ``api_key`` argument
or its environment variable, a header passed with ``headers=`` whose name says it holds a
credential (:func:`is_secret_name`), a query parameter by the same case-insensitive rule
(``key``, ``api_key``, ``apikey``, ``API_KEY``, ``Api-Key``, ``access_token``…), and the
userinfo of the base URL. :class:`Secrets` then masks each of them as ``***`` in every form
text can carry it: raw, stripped of whitespace, ``repr``-escaped (as HTTP libraries print a
header value), JSON-escaped, percent-encoded and as a ``bytes`` repr. The client, the
retries, the SSE reader, errors, events, traces, cassettes and the live view all receive
text that went through one :meth:`Secrets.mask`, so none of them needs its own list.

Keys are checked when given (:func:`check_key`): surrounding whitespace (a key read from a
file keeps its newline) is stripped, and a key that is not printable ASCII is a
:class:`~agentnb.errors.ConfigurationError` that names the position, never the key.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import parse_qsl, quote, quote_plus, unquote, urlencode, urlsplit, urlunsplit

from .errors import ConfigurationError

__all__ = [
    "MASK",
    "Secrets",
    "check_key",
    "is_secret_name",
    "public_url",
    "request_secrets",
    "url_secrets",
]

MASK = "***"
#: A header or query-parameter name holding a credential contains one of these (compared
#: lower-case with ``-`` and ``_`` removed): ``Api-Key``, ``x-api-key``, ``API_KEY``, ``token``…
_SECRET_WORDS = ("key", "token", "secret", "auth", "password", "passwd", "cookie", "signature")
#: Shorter forms are not masked (they would blank ordinary words); keys are far longer.
_MIN = 4


def is_secret_name(name: str) -> bool:
    """Whether a header or query parameter named ``name`` holds a credential."""
    flat = name.lower().replace("-", "").replace("_", "")
    return any(word in flat for word in _SECRET_WORDS) or flat == "sig"


def check_key(key: object, what: str = "api_key", *, spaces: bool = False) -> str | None:
    """``key`` stripped of surrounding whitespace; None when empty. Raises (without the key)
    when it is not a string of printable ASCII (an HTTP header cannot carry anything else);
    ``spaces``: a whole header value, which may hold spaces (``Bearer <key>``)."""
    if key is None:
        return None
    if not isinstance(key, str):
        raise ConfigurationError(f"{what} must be a string, not {type(key).__name__}")
    stripped = key.strip()
    lowest = " " if spaces else "!"
    for position, char in enumerate(stripped):
        if not lowest <= char <= "~":
            raise ConfigurationError(
                f"{what} has a character that cannot be sent in an HTTP header at position "
                f"{position} (U+{ord(char):04X}); a key is printable ASCII. Check how it was "
                "copied (the key itself is not shown)"
            )
    return stripped or None


def forms(secret: str) -> set[str]:
    """Every spelling of ``secret`` that text may carry (see the module docstring)."""
    found = {secret, secret.strip()}
    for s in list(found):
        found |= {
            repr(s)[1:-1],
            json.dumps(s)[1:-1],
            json.dumps(s, ensure_ascii=False)[1:-1],
            quote(s, safe=""),
            quote_plus(s),
            repr(s.encode("utf-8", "surrogatepass"))[2:-1],
        }
    return {f for f in found if len(f) >= _MIN}


class Secrets:
    """The credentials of one client. ``repr`` is ``***``; :meth:`mask` hides each of them."""

    __slots__ = ("_forms", "auth", "base_url", "key", "params", "values")

    def __init__(self, values: Iterable[str | None] = (), *, key: str | None = None) -> None:
        #: The API key sent in the auth header (also among ``values``).
        self.key = key
        #: Headers given with ``headers=`` that hold credentials (shown elsewhere as ``***``).
        self.auth: dict[str, str] = {}
        #: The base URL as given, when it holds credentials (else None).
        self.base_url: str | None = None
        #: Query parameters given with ``query=`` that hold credentials.
        self.params: dict[str, str] = {}
        self.values: tuple[str, ...] = ()
        self._forms: tuple[str, ...] = ()
        self.add(key, *values)

    def add(self, *values: str | None) -> Secrets:
        """Register more credentials (duplicates and empty ones are ignored)."""
        new = [v for v in values if v and v not in self.values]
        if new:
            self.values = (*self.values, *new)
            spelled = set(self._forms).union(*(forms(v) for v in new))
            self._forms = tuple(sorted(spelled, key=len, reverse=True))  # longest first
        return self

    @property
    def forms(self) -> tuple[str, ...]:
        """Every spelling of every credential, longest first (what :meth:`mask` hides)."""
        return self._forms

    def mask(self, text: str) -> str:
        """``text`` with every form of every credential as ``***``."""
        for one in self._forms:
            if one in text:
                text = text.replace(one, MASK)
        return text

    def occurs_in(self, text: str) -> bool:
        """Whether any form of any credential is in ``text`` (cheaper than masking)."""
        return any(one in text for one in self._forms)

    def mask_data(self, data: Any) -> Any:
        """JSON-like ``data`` with :meth:`mask` applied to every string (keys included)."""
        if isinstance(data, str):
            return self.mask(data)
        if isinstance(data, dict):
            return {self.mask(str(k)): self.mask_data(v) for k, v in data.items()}
        if isinstance(data, list | tuple):
            return [self.mask_data(v) for v in data]
        return data

    def headers(self, headers: Mapping[str, str]) -> dict[str, str]:
        """Keep (and register) the values of ``headers`` whose names say they are credentials;
        returns ``headers`` with those values shown as ``***``."""
        for name, value in headers.items():
            if is_secret_name(name):
                self.auth[name] = check_key(value, f"the header {name!r}", spaces=True) or ""
                self.add(*header_secrets(name, self.auth[name]))
        return {k: MASK if k in self.auth else v for k, v in headers.items()}

    def query(self, query: Mapping[str, Any]) -> dict[str, Any]:
        """Like :meth:`headers`, for query parameters (their values are sent as given)."""
        for name, value in query.items():
            if is_secret_name(name):
                self.params[name] = str(value)
                self.add(str(value))
        return {k: MASK if k in self.params else v for k, v in query.items()}

    def __bool__(self) -> bool:
        return bool(self.values)

    def __repr__(self) -> str:
        return MASK if self.values else "None"


def public_url(url: str) -> str:
    """``url`` safe to show: userinfo and credential query parameters become ``***``."""
    parts = urlsplit(url)
    netloc, query = parts.netloc, parts.query
    if "@" in netloc:
        netloc = MASK + "@" + netloc.rpartition("@")[2]
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        if any(is_secret_name(k) for k, _ in pairs):
            shown = [(k, MASK if is_secret_name(k) else v) for k, v in pairs]
            query = urlencode(shown, safe="*")
    if (netloc, query) == (parts.netloc, parts.query):
        return url
    return urlunsplit(parts._replace(netloc=netloc, query=query))


def url_secrets(url: str, query: Mapping[str, Any] | None = None) -> tuple[str, ...]:
    """The credentials written into ``url`` (user:password, a bare token, key parameters) and
    into ``query``; a user name alone is no secret."""
    parts = urlsplit(url)
    found: list[str] = []
    if "@" in parts.netloc:
        userinfo = parts.netloc.rpartition("@")[0]
        for piece in (userinfo, userinfo.partition(":")[2] if ":" in userinfo else userinfo):
            found += [piece, unquote(piece)]
    pairs = [*parse_qsl(parts.query, keep_blank_values=True), *(query or {}).items()]
    found += [str(v) for k, v in pairs if is_secret_name(str(k))]
    return tuple(dict.fromkeys(s for s in found if s))


def header_secrets(name: str, value: str) -> tuple[str, ...]:
    """The credentials a header ``name: value`` carries, by the same name rule: the value,
    the token after an auth scheme (``Bearer``, ``Basic``, ``Token``...; any whitespace
    between, a tab included), the password of a ``Basic`` pair, and each value of a cookie
    (``Cookie: session=...; csrf=...``). A header whose name says nothing of credentials
    carries none."""
    if not value or not is_secret_name(name):
        return ()
    found = [value, value.strip()]
    pieces = value.split(None, 1)
    if len(pieces) == 2:
        scheme, token = pieces[0], pieces[1].strip()
        found.append(token)
        if scheme.lower() == "basic":
            try:
                pair = base64.b64decode(token, validate=True).decode("utf-8", "replace")
            except (binascii.Error, ValueError):
                pair = ""
            found += [pair, pair.partition(":")[2]] if ":" in pair else [pair]
    if "cookie" in name.lower():
        for crumb in value.split(";"):
            _, eq, crumb_value = crumb.partition("=")
            if eq:
                found += [crumb_value.strip(), crumb_value.strip().strip('"')]
    return tuple(dict.fromkeys(s for s in found if s))


def request_secrets(headers: Iterable[tuple[str, str]], url: str) -> Secrets:
    """The credentials an incoming HTTP request carries: in headers (:func:`header_secrets`)
    and in its URL (:func:`url_secrets`). A recording proxy forwards them and keeps none:
    it masks these in everything it records."""
    found: list[str] = []
    for name, value in headers:
        found += header_secrets(name, value)
    found += url_secrets(url)
    return Secrets(found)
