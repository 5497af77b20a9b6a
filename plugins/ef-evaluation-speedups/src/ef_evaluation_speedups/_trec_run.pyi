MAX_LINE_BYTES: int

class LineError(ValueError):
    """A line the parser does not accept; ``args[0]`` is its number."""

class RunParser:
    lines: int
    blank: int
    groups: int
    def __init__(self, table: dict[str, dict[str, float]]) -> None: ...
    def feed(self, data: bytes | bytearray | memoryview, final: bool = ..., /) -> int: ...

def fast_float(text: bytes, /) -> float | None: ...
