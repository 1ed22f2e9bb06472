"""The package version, below every layer so that the command line reads it without the face."""

__version__ = "0.1.0"
