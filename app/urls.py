"""Paths the service hands out (``Location``, redirects, dashboard links, static files), under the ASGI
``root_path``.

Behind an HTTP gateway that mounts dsx under a prefix and strips it (``DSX_ROOT_PATH=/dsx``), a path the browser or
a client is sent to must carry the prefix, while routes keep matching the stripped path. Every generated path goes
through ``public_path`` so that none is written absolute to the server's own root.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from starlette.requests import HTTPConnection
from starlette.types import ASGIApp, Receive, Scope, Send


def root_path(scope: Mapping[str, Any]) -> str:
    return str(scope.get("root_path") or "").rstrip("/")


def public_path(connection: HTTPConnection, path: str) -> str:
    """``path`` (absolute within the service, e.g. ``/v1/jobs/ID``) as the client must request it."""
    return root_path(connection.scope) + path


def internal_path(connection: HTTPConnection, path: str) -> str:
    """A public path (e.g. a sign-in ``next`` target) back within the service; unchanged without the prefix."""
    root = root_path(connection.scope)
    return path[len(root):] if root and (path == root or path.startswith(root + "/")) else path


class RootPathMiddleware:
    """Sets the ASGI ``root_path`` from ``DSX_ROOT_PATH``, whichever server runs the app (uvicorn in compose,
    ``dsx serve``, a test client). As the ASGI spec has it (and uvicorn's ``--root-path`` does), ``path`` then
    includes the prefix: a gateway that strips it gets it put back, one that forwards it is left alone. Routing,
    mounts and static files match below the prefix; ``request.url`` is the public URL."""

    def __init__(self, app: ASGIApp, root: str) -> None:
        self.app = app
        self.root = root.rstrip("/")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket") and self.root:
            path: str = scope["path"]
            if path != self.root and not path.startswith(self.root + "/"):
                path = self.root + path
            scope = {**scope, "root_path": self.root, "path": path, "raw_path": path.encode()}
        await self.app(scope, receive, send)
