# Targets CI calls unchanged. PY is the interpreter that builds the virtual environment.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: venv serve test catalog check-catalog calibrate translations bench clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

venv: $(BIN)/python
	$(BIN)/pip install --quiet -e '.[test]'

serve: $(BIN)/python
	$(BIN)/pip install --quiet -e .
	$(BIN)/tpscalc serve

test: venv
	$(BIN)/python -m pytest

catalog: venv
	$(BIN)/python tools/build_catalog.py
	$(BIN)/python tools/catalog_check.py

check-catalog: venv
	$(BIN)/python tools/catalog_check.py

calibrate: venv
	$(BIN)/python tools/calibrate.py

# Re-extract every message (templates, web/, report/) into the .po files; then translate the new ones.
translations: venv
	$(BIN)/python -m tpscalc.web.translations

bench: venv
	$(BIN)/python benchmarks/accuracy.py
	$(BIN)/python benchmarks/speed.py
	$(BIN)/python benchmarks/web_speed.py

clean:
	rm -rf $(VENV) build dist src/*.egg-info
