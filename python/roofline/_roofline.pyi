"""The native module: the typed ``analyze`` call, and one ``roofline`` command run in this
process."""

from typing import List, Optional

class RooflineError(ValueError):
    """Bad input or usage (the CLI's exit code 2); ``str(e)`` is the CLI's ``error:`` and
    ``hint:`` lines."""

    message: str
    hint: Optional[str]
    code: int
    #: The request's field at fault (``analyze``), else None (absent on command-line errors).
    field: Optional[str]

class RooflineInternalError(RuntimeError):
    """An internal fault (the CLI's exit code 1)."""

    message: str
    hint: Optional[str]
    code: int

def run(args: List[str]) -> str:
    """Runs ``roofline ARGS…`` (without the program name) and returns what it prints on
    stdout; the interpreter lock is released while it runs."""

def analyze(request: str) -> str:
    """The ``analyze`` document (JSON text) for ``request``, the JSON text of an analyze request
    (docs/schema/requests/analyze.schema.json); the interpreter lock is released while it runs."""
