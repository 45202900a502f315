"""What a variant or a task *is*, the same in every process: the key under which a sweep on the
service keeps its finished runs (:mod:`agentnb.evals.sweep`: they are found again by it).

Names alone are not enough: a tool whose code changed under the same name, an edited check
function, two lambdas of one task, another model function — each must make another key, or a
sweep started again would take the old runs as this one's (silently wrong). So:

- plain data (scalars, dates, and containers of them) is itself;
- a function is its qualified name, its code (``marshal`` of the code object: constants and
  nested functions included), its defaults and what it closes over;
- a dataclass (every check) is its class and its fields; any other object (a model, the tool
  desk a method is bound to) its class and its public attributes, to a few levels.

Left out, so that a sweep started again keeps its key: what records what was done rather than
what is (:data:`BOOKKEEPING`: a model's ``requests``...), anything whose name says it holds a
credential (the one secrets rule), and the *contents* of a mutable container a function closes
over (a list it appends to, a dict it fills: they change as the runs go; their type counts).
Unlike the response cache's key (:func:`agentnb.evals.cache.model_identity`), nothing here is
an identity of this process: a sweep continued in a new process finds its runs.
"""

from __future__ import annotations

import dataclasses
import hashlib
import marshal
import types
from datetime import date, datetime
from typing import Any

from .._secrets import is_secret_name

__all__ = ["BOOKKEEPING", "stable_identity"]

#: Attributes that record what an object did, not what it is.
BOOKKEEPING = frozenset(("requests", "hits", "misses", "calls"))
#: How deep objects are followed (a cycle ends here too).
DEPTH = 4
_MUTABLE = (list, dict, set, bytearray)


def stable_identity(value: Any, depth: int = DEPTH, *, held: bool = False) -> Any:
    """``value`` as plain data that changes when what it does changes (module docstring);
    ``held``: a value a function closes over or defaults to (mutable contents left out)."""
    if value is None or isinstance(value, bool | int | float | str | bytes):
        return value if not isinstance(value, bytes) else hashlib.sha256(value).hexdigest()
    if isinstance(value, date | datetime):
        return value.isoformat()
    if depth <= 0 or (held and isinstance(value, _MUTABLE)):
        return {"class": type(value).__qualname__}
    deeper = depth - 1
    if isinstance(value, list | tuple | set | frozenset):
        items = [stable_identity(v, deeper, held=held) for v in value]
        return sorted(items, key=repr) if isinstance(value, set | frozenset) else items
    if isinstance(value, dict):
        return {str(k): stable_identity(v, deeper, held=held) for k, v in value.items()}
    if isinstance(value, types.ModuleType | type):
        return {"object": f"{getattr(value, '__module__', '')}.{value.__name__}"}
    if isinstance(value, types.MethodType):
        bound = stable_identity(value.__self__, deeper)
        return {"method": stable_identity(value.__func__, deeper), "self": bound}
    if isinstance(value, types.FunctionType):
        cells = [c.cell_contents for c in value.__closure__ or () if _filled(c)]
        return {
            "fn": f"{value.__module__}.{value.__qualname__}",
            "code": hashlib.sha256(marshal.dumps(value.__code__)).hexdigest()[:16],
            "defaults": stable_identity(value.__defaults__, deeper, held=True),
            "closure": [stable_identity(c, deeper, held=True) for c in cells],
        }
    kind = f"{type(value).__module__}.{type(value).__qualname__}"
    if dataclasses.is_dataclass(value):
        fields = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
        return {"class": kind, **{k: stable_identity(v, deeper) for k, v in fields.items()}}
    try:
        attributes = vars(value)
    except TypeError:  # slots, builtins: its class is all that is known
        return {"class": kind}
    kept = {
        name: stable_identity(v, deeper)
        for name, v in sorted(attributes.items())
        if not name.startswith("_") and name not in BOOKKEEPING and not is_secret_name(name)
    }
    return {"class": kind, **kept}


def _filled(cell: Any) -> bool:
    try:
        return cell.cell_contents is not cell  # always true once it holds a value
    except ValueError:  # a closure variable not assigned yet
        return False
