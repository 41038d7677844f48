"""A test HTTP gateway that mounts an ASGI app under a path prefix and strips it before forwarding, as ingress
controllers and API gateways do. It does not tell the app about the prefix: dsx must know it (DSX_ROOT_PATH)."""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send


class PrefixProxy:
    def __init__(self, app: ASGIApp, prefix: str) -> None:
        self.app = app
        self.prefix = prefix.rstrip("/")
        self.outside: list[str] = []  # paths requested outside the mount: a link that escaped the prefix

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        path: str = scope["path"]
        if path != self.prefix and not path.startswith(self.prefix + "/"):
            self.outside.append(path)
            await send({"type": "http.response.start", "status": 404,
                        "headers": [(b"content-type", b"text/plain")]})
            await send({"type": "http.response.body", "body": b"not mounted here"})
            return
        inner = path[len(self.prefix):] or "/"
        await self.app({**scope, "path": inner, "raw_path": inner.encode()}, receive, send)
