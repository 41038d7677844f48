"""Datasheet documents: content-addressed storage, the index, and the navigation tools."""
