"""Typed client for the dsx datasheet-extraction service."""
