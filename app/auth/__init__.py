"""Who may call: API keys (issued once, stored hashed, bound to a tenant and roles), the request principal
and role checks, and per-key and per-tenant limits."""
