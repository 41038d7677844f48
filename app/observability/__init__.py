"""Cross-cutting operational plumbing: log context, JSON logs, request ids, HTTP server spans."""
