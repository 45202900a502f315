"""The runtime: one module per lifecycle stage, the loop that chains them, the Run driver.

restore → assemble → call_model → decide → execute_tools → check_stop → persist
"""

from .run import Run, RunResult

__all__ = ["Run", "RunResult"]
