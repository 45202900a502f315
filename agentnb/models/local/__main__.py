"""``python -m agentnb.models.local fetch|check|serve``: see :mod:`.cli`."""

import sys

from .cli import main

sys.exit(main())
