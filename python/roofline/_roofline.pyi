"""The native module: one ``roofline`` command run in this process."""

from typing import List, Optional

class RooflineError(ValueError):
    """Bad input or usage (the CLI's exit code 2); ``str(e)`` is the CLI's ``error:`` and
    ``hint:`` lines."""

    message: str
    hint: Optional[str]
    code: int

class RooflineInternalError(RuntimeError):
    """An internal fault (the CLI's exit code 1)."""

    message: str
    hint: Optional[str]
    code: int

def run(args: List[str]) -> str:
    """Runs ``roofline ARGS…`` (without the program name) and returns what it prints on
    stdout; the interpreter lock is released while it runs."""
