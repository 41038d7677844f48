"""A test HTTP gateway that mounts an ASGI app under a path prefix and strips it before forwarding, as ingress
controllers and API gateways do. It does not tell the app about the prefix: dsx must know it (DSX_ROOT_PATH)."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
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


_HOP_HEADERS = frozenset({"connection", "keep-alive", "transfer-encoding", "content-length", "host",
                          "content-encoding", "accept-encoding"})


class HTTPPrefixProxy:
    """The same gateway over real HTTP (for a browser): ``base_url`` + prefix reaches ``upstream`` with the prefix
    stripped; anything outside the prefix is a 404 recorded in ``outside``."""

    def __init__(self, upstream: str, prefix: str) -> None:
        self.upstream = upstream.rstrip("/")
        self.prefix = prefix.rstrip("/")
        self.outside: list[str] = []
        self._server: ThreadingHTTPServer | None = None

    @property
    def base_url(self) -> str:
        assert self._server is not None, "proxy not started"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> HTTPPrefixProxy:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _proxy_handler(self))
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, name="prefix-proxy", daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()


def _proxy_handler(proxy: HTTPPrefixProxy) -> type[BaseHTTPRequestHandler]:
    client = httpx.Client(follow_redirects=False, timeout=30)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:
            return

        def _forward(self) -> None:
            path = self.path
            if path != proxy.prefix and not path.startswith((proxy.prefix + "/", proxy.prefix + "?")):
                proxy.outside.append(path)
                self._reply(404, {"content-type": "text/plain"}, b"not mounted here")
                return
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else None
            headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP_HEADERS}
            upstream = client.request(self.command, proxy.upstream + (path[len(proxy.prefix):] or "/"),
                                      headers=headers, content=body)
            self._reply(upstream.status_code, {k: v for k, v in upstream.headers.multi_items()
                                               if k.lower() not in _HOP_HEADERS}, upstream.content)

        def _reply(self, status: int, headers: dict[str, str] | list[tuple[str, str]], body: bytes) -> None:
            self.send_response(status)
            for key, value in (headers.items() if isinstance(headers, dict) else headers):
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = _forward  # noqa: N815 - http.server naming

    return Handler
