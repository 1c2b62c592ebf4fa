"""``python -m cli``: the ``costmodel`` command."""

import sys

from .main import main

sys.exit(main())
