"""Orchestration above the domains: flows that tie jobs, documents, the agent, dispatch and review together."""
