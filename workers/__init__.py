"""Celery entry points (thin: they call the pipeline)."""
