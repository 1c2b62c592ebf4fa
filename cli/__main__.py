"""``python -m cli``: the ``costmodel`` command."""

from .main import console

console()
