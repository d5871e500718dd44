"""Cortex LSP: a local AI agent inside the editor, served over the Language Server Protocol."""

__version__ = "0.1.0"
