"""Pure estimation core: memory, fit and speed. No I/O, no printing, no globals."""
from __future__ import annotations

import sys
import types
from typing import Any


class _CallableModule(types.ModuleType):
    """This package, callable as the Python API's `tpscalc.estimate(model, gpu, ...)`.

    Importing any `tpscalc.estimate.*` module binds the name `tpscalc.estimate` to this
    package, hiding the API function of the same name; calling the package forwards to it.
    """

    def __call__(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        from tpscalc.api import estimate

        return estimate(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
