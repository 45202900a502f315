"""A session: the transcript (messages, pairing), its guarded edits, the per-session lock, the
event bus (one ``seq``), the store it commits to, and the records of its runs.

:func:`add_observer` hears every event of every session (what ``an.log`` and
``an.observe.instrument`` switch on).
"""

from .bus import add_observer
from .edits import EditRecord
from .ids import new_run_id, new_trace_id
from .records import RequestRecord, RunRecord, checked_tags
from .session import MemoryStore, MessageList, Session, SubscriberError, conversation_problems
from .store import Records, Store, validate_session_id

__all__ = [
    "EditRecord",
    "MemoryStore",
    "MessageList",
    "Records",
    "RequestRecord",
    "RunRecord",
    "Session",
    "Store",
    "SubscriberError",
    "add_observer",
    "checked_tags",
    "conversation_problems",
    "new_run_id",
    "new_trace_id",
    "validate_session_id",
]
