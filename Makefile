# One entry point for people and CI. `make test` creates .venv if missing, installs, runs tests.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install run test test-slow test-fuzz bench clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

# Reinstall when the dependency lists change.
$(STAMP): $(BIN)/python pyproject.toml constraints.txt
	$(BIN)/pip install -q -c constraints.txt torch==2.13.0
	$(BIN)/pip install -q -c constraints.txt -e '.[kokoro,test]'
	# Smart Turn v3's weights (fdenv.train.smart_turn) ship in pipecat-ai's wheel; only that file is
	# read, and pipecat's own dependencies (which pin soxr below ours) are not needed
	$(BIN)/pip install -q --no-deps -c constraints.txt pipecat-ai==1.14.0
	touch $(STAMP)

install: $(STAMP)

# The main job: the baseline agents over shipped scenes, scored, as a table.
run: $(STAMP)
	HF_HUB_OFFLINE=1 $(BIN)/fdenv-run -m agent=silent,talker,oracle

# Fast tier (default) and the slow tier (real ASR, many rendered episodes).
test: $(STAMP)
	HF_HUB_OFFLINE=1 $(BIN)/python -m pytest -q

test-slow: $(STAMP)
	HF_HUB_OFFLINE=1 $(BIN)/python -m pytest -q -m slow

# Fuzz tier: generated bad input (scene files, actions, API arguments, FDB folders, run-folder
# lines, cache files); each case ends in a result or a documented fdenv error (tests/fuzz).
test-fuzz: $(STAMP)
	HF_HUB_OFFLINE=1 $(BIN)/python -m pytest -q -m fuzz tests/fuzz

bench: $(STAMP)
	HF_HUB_OFFLINE=1 $(BIN)/python benchmarks/bench_env.py

clean:
	rm -rf $(VENV) runs outputs .pytest_cache
