"""``GET /docs``: the OpenAPI document (``GET /openapi.json``) rendered by Swagger UI.

Swagger UI is vendored (``static/vendor/swagger-ui/``, recorded with its version and checksums
in ``static/vendor/README.md``) and served from ``/docs/assets/``, so the page needs no network
beyond the service. It runs under the web page's Content-Security-Policy: no inline script or
style, no other origin; its start-up code is ``static/docs.js``.

Like the web page, these routes are not part of the ``/v1`` API or of its OpenAPI document; a
missing asset is a 404 in the API's one error shape.
"""

from __future__ import annotations

from flask import Blueprint, Response, render_template

from ..web.views import CONTENT_SECURITY_POLICY, asset_headers

__all__ = ["blp"]

blp = Blueprint(
    "docs",
    __name__,
    static_folder="static",
    static_url_path="/docs/assets",
    template_folder="templates",
)
blp.after_request(asset_headers)


@blp.route("/docs", methods=["GET"])
def docs() -> Response:
    """The API's reference, rendered in the browser from ``/openapi.json``."""
    response = Response(render_template("docs/index.html"), mimetype="text/html")
    response.headers["Content-Security-Policy"] = CONTENT_SECURITY_POLICY
    response.headers["Referrer-Policy"] = "no-referrer"
    return response
