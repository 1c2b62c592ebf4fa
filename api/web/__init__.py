"""The web page of the service: ``GET /`` and its assets under ``/assets/`` (see
:mod:`api.web.views`)."""

from .views import blp

__all__ = ["blp"]
