"""Shared by the observe tests."""

#: The API key every test app sends: it must never be found in anything agentnb keeps.
KEY = "sk-test-NEVER-STORE-4f1a9c"


def canonical(messages):
    from agentnb.observe.conversations import canonical as key

    return [key(m) for m in messages]
