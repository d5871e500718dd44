"""URL routes of the billing app."""


def register() -> list[str]:
    return ["/health", "/invoices/<day>"]
