"""What every front door (the LSP server, the ACP agent) needs below it, once.

Settings for a front (:mod:`.settings`), the model client and memory store a front keeps
(:mod:`.host`), running one agent request with cancel (:mod:`.runner`), kernel events as
front-neutral client updates (:mod:`.updates`), and the session/history calls (:mod:`.sessions`).
Nothing here knows LSP or ACP.
"""
