"""What a variant or a task *is*, the same in every process: the key under which a sweep on the
service keeps its finished runs (:mod:`agentnb.evals.sweep`: they are found again by it).

Names alone are not enough: a tool whose code changed under the same name, an edited check
function, two lambdas of one task, another model function — each must make another key, or a
sweep started again would take the old runs as this one's (silently wrong). So:

- plain data (scalars, dates, and containers of them) is itself;
- a function is its qualified name, its code (``marshal`` of the code object: constants and
  nested functions included), its defaults and what it closes over;
- a dataclass (every check) is its class and its public fields; any other object (a model, the
  tool desk a method is bound to) its class and its public attributes, to a few levels;
  containers of plain data are followed whole (``model_params={"stop": [...]}``, a JSON
  schema in ``response_format``);
- a variant (:func:`variant_identity`) is all of that for the agent, its model and every
  tool: each tool's schema as the model sees it (its name, description and parameters) and
  its function.

Left out, so that a sweep started again keeps its key: what records what was done rather than
what is (:data:`BOOKKEEPING`: a model's ``requests``...), credential *values* (an object's
registered :class:`~agentnb._secrets.Secrets` mask every string under it; a setting named
``max_tokens`` or ``key_prefix`` counts like any other), and the *contents* of a mutable
container a function closes over (a list it appends to, a dict it fills: they change as the
runs go; their type counts).
Unlike the response cache's key (:func:`agentnb.evals.cache.model_identity`), nothing here is
an identity of this process: a sweep continued in a new process finds its runs.
"""

from __future__ import annotations

import dataclasses
import hashlib
import marshal
import types
from datetime import date, datetime
from functools import partial
from typing import Any

from ..models import Secrets

__all__ = ["BOOKKEEPING", "code_digest", "stable_identity", "variant_identity"]

#: Attributes that record what an object did, not what it is.
BOOKKEEPING = frozenset(("requests", "hits", "misses", "calls"))
#: How deep objects are followed (a cycle ends here too).
DEPTH = 4
#: How deep containers are followed (plain data is followed whole; a cycle ends here).
NESTING = 64
_MUTABLE = (list, dict, set, bytearray)


def code_digest(code: types.CodeType) -> str:
    """A function's code as 16 hex digits, the same in every process and at every moment.

    marshal version 2: later versions write back-references or not by the objects' reference
    counts, so the same code hashed two ways as a process went on (the response cache missed
    its own replies)."""
    return hashlib.sha256(marshal.dumps(code, 2)).hexdigest()[:16]


def stable_identity(
    value: Any,
    depth: int = DEPTH,
    *,
    held: bool = False,
    mask: Secrets | None = None,
    nesting: int = NESTING,
) -> Any:
    """``value`` as plain data that changes when what it does changes (module docstring);
    ``held``: a value a function closes over or defaults to (mutable contents left out);
    ``mask``: the credentials registered above it, masked in every string."""
    if isinstance(value, str):
        return mask.mask(value) if mask else value
    if value is None or isinstance(value, bool | int | float | bytes):
        return value if not isinstance(value, bytes) else hashlib.sha256(value).hexdigest()
    if isinstance(value, date | datetime):
        return value.isoformat()
    if isinstance(value, Secrets):
        return {"class": "Secrets"}  # credentials: never part of what a thing is
    if held and isinstance(value, _MUTABLE):
        return {"class": type(value).__qualname__}
    if isinstance(value, list | tuple | set | frozenset | dict):
        if nesting <= 0:
            return {"class": type(value).__qualname__}
        inner = partial(stable_identity, depth=depth, held=held, mask=mask, nesting=nesting - 1)
        if isinstance(value, dict):
            return {str(inner(k)): inner(v) for k, v in value.items()}
        items = [inner(v) for v in value]
        return sorted(items, key=repr) if isinstance(value, set | frozenset) else items
    if depth <= 0:
        return {"class": type(value).__qualname__}
    deeper = partial(stable_identity, depth=depth - 1, mask=mask)
    if isinstance(value, types.ModuleType | type):
        return {"object": f"{getattr(value, '__module__', '')}.{value.__name__}"}
    if isinstance(value, types.MethodType):
        return {"method": deeper(value.__func__), "self": deeper(value.__self__)}
    if isinstance(value, types.FunctionType):
        cells = [c.cell_contents for c in value.__closure__ or () if _filled(c)]
        return {
            "fn": f"{value.__module__}.{value.__qualname__}",
            "code": code_digest(value.__code__),
            "defaults": deeper(value.__defaults__, held=True),
            "closure": [deeper(c, held=True) for c in cells],
        }
    kind = f"{type(value).__module__}.{type(value).__qualname__}"
    if dataclasses.is_dataclass(value):
        attributes = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    else:
        try:
            attributes = dict(vars(value))
        except TypeError:  # slots, builtins: its class is all that is known
            return {"class": kind}
    own = [v for v in attributes.values() if isinstance(v, Secrets)]
    if own:  # its credentials, registered: masked in everything under it
        deeper = partial(deeper, mask=Secrets([*(mask.values if mask else ()), *_values(own)]))
    kept = {
        name: deeper(v)
        for name, v in sorted(attributes.items())
        if not name.startswith("_") and name not in BOOKKEEPING and not isinstance(v, Secrets)
    }
    return {"class": kind, **kept}


def _values(secrets: list[Secrets]) -> list[str]:
    return [value for s in secrets for value in s.values]


def variant_identity(agent: Any) -> Any:
    """What a variant is: everything that can change its runs - the agent's settings, its
    model (parameters of any shape included), and each tool's schema as the model sees it
    with the function behind it (an app: what it is, see :func:`stable_identity`)."""
    if agent is None:
        return None
    tools = getattr(agent, "tools", None)
    if tools is None:  # an app (agentnb.evals.App)
        return stable_identity(agent)
    settings = {k: v for k, v in vars(agent).items() if k != "tools" and not k.startswith("_")}
    return {
        "agent": stable_identity(settings),
        "context": stable_identity(getattr(agent, "context", None)),
        "tools": [
            {"schema": stable_identity(t.schema), "fn": stable_identity(getattr(t, "fn", None))}
            for t in tools
        ],
    }


def _filled(cell: Any) -> bool:
    try:
        return cell.cell_contents is not cell  # always true once it holds a value
    except ValueError:  # a closure variable not assigned yet
        return False
