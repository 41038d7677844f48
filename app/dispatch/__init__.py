"""The dispatch record: every LLM and tool call as an OpenTelemetry span, stored in the database."""
