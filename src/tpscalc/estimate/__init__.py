"""The estimation engine: memory, fit and speed of a model on a device.

The formulas (weights, memory, fit, speed) are pure functions of their arguments. The package
reads two data files that ship with the catalog, each once and through one loader: the
precomputed weight table (`weights.py`) and the fitted speed calibration
(`calibration_store.py`). `engine.py` composes the terms for the reports; `runtime.py` says what
a runtime (llama.cpp first) stores and how it places it.
"""
