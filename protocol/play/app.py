"""The HTTP side of ``damka play``: a small JSON API and the static page, on Starlette.

Why Starlette (served by uvicorn): it does routing, JSON and static files and nothing more,
with two small dependencies (anyio; uvicorn adds h11 and click); it is async, so a request
waiting for the computer's move holds no thread and the page's other requests (the state, a
take-back) are answered while the engine thinks; it ships an in-process test client, so the
API is tested without a network; and both projects are actively maintained and very widely
used. Flask or Bottle would need a threaded WSGI server for the same non-blocking behaviour.

Routes (squares in the rule set's notation; every error is ``{"error": {"code", "message"}}``
with a 4xx status, and a rejected request changes nothing):

* ``GET  /api/variants``               the rule sets, levels and defaults for the menu
* ``POST /api/games``                  a new game: variant, forced_capture, opponent, level,
                                       human, fen, moves (replayed), seed -> state (201)
* ``GET  /api/games/{id}``             the game state
* ``GET  /api/games/{id}/moves``       the legal moves
* ``POST /api/games/{id}/move``        ``{"move": "32-28"}`` or ``{"path": [...]}`` -> state
* ``POST /api/games/{id}/engine``      the computer plays its move -> state
* ``POST /api/games/{id}/takeback``    take back the last move (and the computer's reply)
* ``GET  /api/games/{id}/pdn``         the game as a PDN file (download)

Pages: ``/`` the game, ``/rules/{name}.html`` a rules page written from the rules records
(rules_pages; an alias redirects to its rule set's page), ``/static/...`` the page's files.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import (FileResponse, HTMLResponse, JSONResponse, PlainTextResponse,
                                 RedirectResponse, Response)
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from engine.variants import VARIANTS

from . import STATIC_DIR, rules_pages
from .session import (DEFAULT_LEVEL, DEFAULT_OPPONENT, DEFAULT_VARIANT, LEVEL_NAMES, ApiError,
                      PlaySession, SessionStore, read_no_fields)

__all__ = ["create_app"]

MAX_BODY = 256 * 1024  #: bytes; a restored game of MAX_MOVES moves fits easily


def _error(exc: ApiError) -> JSONResponse:
    return JSONResponse(exc.payload(), status_code=exc.status)


async def _body(request: Request) -> Any:
    """The request's JSON body (None when empty); ApiError 400/413/415 when it is not JSON."""
    size = request.headers.get("content-length")
    if size is not None and (not size.isdigit() or int(size) > MAX_BODY):
        raise ApiError(413, "too_large", f"the request body must be at most {MAX_BODY} bytes")
    raw = b""
    try:
        async for chunk in request.stream():
            raw += chunk
            if len(raw) > MAX_BODY:
                raise ApiError(413, "too_large", f"the request body must be at most {MAX_BODY} bytes")
    except ClientDisconnect:  # gone before its body was sent: no answer reaches it
        raise ApiError(400, "client_disconnect", "the client left before its request was sent") from None
    if not raw.strip():
        return None
    # application/json alone: a web page of another site can send a text/plain (or untyped)
    # body to this server without asking first, a JSON one only after a CORS preflight,
    # which the server does not answer
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/json":
        raise ApiError(415, "unsupported_media_type", "send the request body as application/json")
    try:
        value = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ApiError(400, "bad_json", f"the request body is not valid JSON: {exc}") from None
    except RecursionError:  # "[[[[..." nested past Python's recursion limit
        raise ApiError(400, "bad_json", "the request body is nested too deeply") from None
    try:  # "\ud800" is valid JSON but no Unicode text: an answer quoting it could not be sent
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise ApiError(400, "bad_json", "the request body holds a lone surrogate (\\uD800-\\uDFFF)") from None
    return value


def create_app(store: SessionStore | None = None) -> Starlette:
    """The web application; ``store`` holds its games (a fresh one by default)."""
    games = store if store is not None else SessionStore()

    def session_of(request: Request) -> PlaySession:
        return games.get(request.path_params["game_id"])

    async def variants(request: Request) -> Response:
        return JSONResponse({
            "variants": [
                {"name": v.name, "title": v.title, "label": rules_pages.menu_label(v), "size": v.size,
                 "first": "white" if v.white_starts else "black",
                 "house_rule": rules_pages.house_rule_allowed(v)}
                for v in VARIANTS
            ],
            "levels": list(LEVEL_NAMES),
            "defaults": {"variant": DEFAULT_VARIANT, "opponent": DEFAULT_OPPONENT, "level": DEFAULT_LEVEL},
        })

    async def new_game(request: Request) -> Response:
        session = games.create(await _body(request))
        return JSONResponse(session.state(), status_code=201,
                            headers={"Location": f"/api/games/{session.id}"})

    async def game_state(request: Request) -> Response:
        return JSONResponse(session_of(request).state())

    async def legal_moves(request: Request) -> Response:
        session = session_of(request)
        return JSONResponse({"id": session.id, "moves": session.legal_moves()})

    async def make_move(request: Request) -> Response:
        session = session_of(request)
        session.play(await _body(request))
        return JSONResponse(session.state())

    async def engine_move(request: Request) -> Response:
        session = session_of(request)
        read_no_fields(await _body(request))
        while True:
            future, current = session.request_engine_move()
            try:
                await asyncio.wrap_future(future)
            except Exception:  # noqa: BLE001 - reported through the state's engine_error
                pass
            if current:
                break
            await asyncio.sleep(0.005)  # a stale search is ending: then start ours
        return JSONResponse(session.state())

    async def take_back(request: Request) -> Response:
        session = session_of(request)
        read_no_fields(await _body(request))
        session.take_back()
        return JSONResponse(session.state())

    async def pdn(request: Request) -> Response:
        session = session_of(request)
        name = f"damka-{session.variant.name}-{session.id[:8]}.pdn"
        return PlainTextResponse(
            session.pdn(),
            media_type="application/x-draughts-pdn",
            headers={"Content-Disposition": f'attachment; filename="{name}"'},
        )

    async def index(request: Request) -> Response:
        return FileResponse(STATIC_DIR / "index.html", headers={"Cache-Control": "no-cache"})

    async def rules_index(request: Request) -> Response:
        return RedirectResponse("/rules/international.html")

    async def rules_page(request: Request) -> Response:
        name = request.path_params["name"]
        page = rules_pages.canonical_page(name)
        if page is None:
            raise HTTPException(404)
        if page != name:
            return RedirectResponse(f"/rules/{page}.html")
        return HTMLResponse(rules_pages.render(page), headers={"Cache-Control": "no-cache"})

    async def rules_css(request: Request) -> Response:
        return FileResponse(STATIC_DIR / "rules" / "rules.css")

    async def api_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, ApiError)
        return _error(exc)

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
        message = {404: "no such page or API route", 405: "method not allowed here"}.get(
            exc.status_code, str(exc.detail))
        if request.url.path.startswith("/api/") or exc.status_code != 404:
            return JSONResponse({"error": {"code": code, "message": message}},
                                status_code=exc.status_code, headers=exc.headers)
        return PlainTextResponse(f"{exc.status_code} {message}", status_code=exc.status_code)

    routes = [
        Route("/", index),
        Route("/api/variants", variants),
        Route("/api/games", new_game, methods=["POST"]),
        Route("/api/games/{game_id}", game_state),
        Route("/api/games/{game_id}/moves", legal_moves),
        Route("/api/games/{game_id}/move", make_move, methods=["POST"]),
        Route("/api/games/{game_id}/engine", engine_move, methods=["POST"]),
        Route("/api/games/{game_id}/takeback", take_back, methods=["POST"]),
        Route("/api/games/{game_id}/pdn", pdn),
        Route("/rules", rules_index),
        Route("/rules/", rules_index),
        Route("/rules/rules.css", rules_css),
        Route("/rules/{name}.html", rules_page),
        Mount("/static", StaticFiles(directory=STATIC_DIR)),
    ]
    app = Starlette(routes=routes, exception_handlers={ApiError: api_error, HTTPException: http_error})
    app.state.games = games
    return app
