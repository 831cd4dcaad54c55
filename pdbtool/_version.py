"""The package version, at the bottom layer so that the table file format can record it."""

__version__ = "0.1.0"
