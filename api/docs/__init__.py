"""The API's documentation for people: ``GET /docs`` (see :mod:`api.docs.views`)."""

from .views import blp

__all__ = ["blp"]
