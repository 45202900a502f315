"""The runtime: one module per lifecycle stage, the loop that orders them, the Run driver.

restore → assemble → call_model → decide → execute_tools → check_stop → persist
"""

from .check_stop import RunView
from .result import RunResult
from .run import Run

__all__ = ["Run", "RunResult", "RunView"]
