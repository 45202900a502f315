"""``python -m agentnb.models.local fetch|check|serve``: see :func:`server.main`."""

import sys

from .server import main

sys.exit(main())
