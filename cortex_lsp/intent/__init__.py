"""Reading the user's words: the provenance cuts (quoted, fenced, pasted and handed-over material), the
clause analysis and the cues, parsed once into an :class:`~cortex_lsp.intent.intent.Intent` that the
resource guards of :mod:`cortex_lsp.guards` read."""
