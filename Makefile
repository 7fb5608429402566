PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# `make demo` needs only the core and the eval extra (ratings, plots): no torch.
DEMO_STAMP := $(VENV)/.installed-demo

.PHONY: venv test soak bench demo clean browser-deps

venv: $(STAMP)

# torch goes in first and explicitly, pinned to the CPU build, so that nothing
# later pulls a CUDA build in its place.
$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --upgrade pip
	$(BIN)/python -m pip install "torch==2.13.0"
	$(BIN)/python -m pip install -e ".[all]"
	touch $(STAMP)

# Debian's Chromium, for the browser test of the web page (tests/test_browser.py).
browser-deps:
	command -v chromium >/dev/null || (apt-get update && apt-get install -y chromium)

test: venv browser-deps
	$(BIN)/python -m pytest -q -n 2

soak: venv
	$(BIN)/python -m pytest -q -m slow

bench: venv
	$(BIN)/ripmarket bench --json

$(DEMO_STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --upgrade pip
	$(BIN)/python -m pip install -e ".[eval]"
	touch $(DEMO_STAMP)

demo: $(DEMO_STAMP)
	$(BIN)/ripmarket demo

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .hypothesis
	find . -path ./.git -prune -o -type d -name __pycache__ -prune -exec rm -rf {} +
