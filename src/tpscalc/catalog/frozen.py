"""eq, hash and repr for frozen dataclasses, written once instead of compiled for each class.

`@dataclass(frozen=True)` compiles __init__, __repr__, __eq__, __hash__, __setattr__ and
__delattr__ for every class when its module is imported; the CLI imports ~40 such classes, and
that compiling is a good part of its start-up. A class declared
`@dataclass(frozen=True, eq=False, repr=False)` that derives from `FrozenValue` gets these
generic methods instead, with the same results (fields compared and hashed as one tuple, in
order; the repr `Name(field=value, ...)`).
"""
from __future__ import annotations

from dataclasses import fields

_COMPARED: dict[type, tuple[str, ...]] = {}


def _compared(cls: type) -> tuple[str, ...]:
    """The names of the fields of dataclass `cls` that take part in comparisons, in order."""
    names = _COMPARED.get(cls)
    if names is None:
        names = _COMPARED[cls] = tuple(f.name for f in fields(cls) if f.compare)
    return names


class FrozenValue:
    """The base of a frozen dataclass declared with eq=False, repr=False (see the module)."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        names = _compared(type(self))
        return (tuple([getattr(self, n) for n in names])
                == tuple([getattr(other, n) for n in names]))

    def __hash__(self) -> int:
        return hash(tuple([getattr(self, n) for n in _compared(type(self))]))

    def __repr__(self) -> str:
        inner = ", ".join(f"{f.name}={getattr(self, f.name)!r}"
                          for f in fields(self) if f.repr)  # type: ignore[arg-type]
        return f"{type(self).__qualname__}({inner})"
