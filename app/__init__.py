"""dsx: datasheet parameter extraction with a dispatch record."""

__version__ = "0.1.0"
