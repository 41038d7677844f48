"""The HTTP edge: routers, problem-detail handlers and request metrics."""
