"""``python -m cortex_lsp``: the same entry point as the ``cortex-lsp`` script."""

from cortex_lsp.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
