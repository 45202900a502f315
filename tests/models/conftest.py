"""Model-client tests: their helpers live beside them (``openai_helpers.py``)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
