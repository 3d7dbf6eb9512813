"""The copilot chat page (``guardrail serve --ui``): the plain files of ``guardrail/ui/``
served at ``/ui/``, on the same origin as ``/v1``, so the page needs no CORS.  No build
step, nothing fetched from elsewhere: the page works offline.

The page renders model output, so its responses carry a strict Content-Security-Policy:
scripts and styles only from this origin, no inline script.  ``connect-src`` allows any
http(s) endpoint, because the page's endpoint field may point at another guardrail.
"""

from __future__ import annotations

from pathlib import Path

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import Scope

UI_DIR = Path(__file__).resolve().parent.parent / "ui"
HEADERS = {
    "content-security-policy": "default-src 'self'; script-src 'self'; style-src 'self'; "
                               "img-src 'self' data:; connect-src 'self' http: https:; "
                               "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
}

__all__ = ["UI_DIR", "routes"]


class _PageFiles(StaticFiles):
    async def get_response(self, path: str, scope: Scope) -> Response:
        response = await super().get_response(path, scope)
        response.headers.update(HEADERS)
        return response


async def _to_page(request: Request) -> Response:
    return RedirectResponse(str(request.url_for("ui", path="/")))


def routes() -> list[BaseRoute]:
    """``/ui/`` (the page) and ``/`` (a redirect to it)."""
    if not (UI_DIR / "index.html").is_file():
        raise RuntimeError(f"the chat page is missing from this install ({UI_DIR}); "
                           "reinstall guardrail with its package data")
    return [Mount("/ui", app=_PageFiles(directory=UI_DIR, html=True), name="ui"),
            Route("/", _to_page, methods=["GET"])]
