# evalkit set-up and entry points. Every target creates/updates a local .venv first (idempotent).
# `make setup` installs the `dev` extra (everything: the lab, the tests, Dask); `make report` and `make score` only the
# `report` extra (what the default report runs: the encoders, and the judge client). tools/extras.py records
# what .venv holds, so an extra another one includes (dev includes report and lab) installs nothing twice.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
EXTRAS ?= dev
export HF_HUB_OFFLINE := 1
export RAGAS_DO_NOT_TRACK := true
export MPLBACKEND := Agg

.PHONY: setup install report test score clean-reports

setup:
	@$(PYTHON) tools/extras.py covered "$(EXTRAS)" $(VENV) || $(MAKE) --no-print-directory install EXTRAS="$(EXTRAS)"

install:
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --upgrade "pip>=24"
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e ".[$(EXTRAS)]"
	$(BIN)/python -m ipykernel install --sys-prefix --name python3 --display-name "Python 3" >/dev/null
	# saving a committed notebook from JupyterLab keeps it as committed (no outputs): evalkit/publish/jupyter_hooks.py
	$(BIN)/python -m evalkit.publish.jupyter_hooks --install >/dev/null
	$(BIN)/python tools/extras.py record "$(EXTRAS)" $(VENV)

## score the bundled sample and write per-row results
score:
	@$(MAKE) --no-print-directory setup EXTRAS=report
	$(BIN)/evalkit score data/sample_rag.jsonl -o reports/sample/results.parquet --config experiments/default.config.yaml

## the default experiment: notebooks -> reports/default/ (HTML report, figures, metrics.json, signature.json)
report:
	@$(MAKE) --no-print-directory setup EXTRAS=report
	$(BIN)/evalkit report experiments/default.yaml

## the test suite (executes every notebook through papermill), on TEST_WORKERS processes (pytest-xdist; a file's
## tests share one process, so its fixtures are built once). TEST_WORKERS=0 runs it in this process alone.
## No .pytest_cache: the suite leaves the checkout as it found it (tests/conftest.py removes what its runs write).
TEST_WORKERS ?= 2
test: setup
	@bash tools/system_tools.sh
	$(BIN)/python -m pytest -q -p no:cacheprovider $(if $(filter 0,$(TEST_WORKERS)),,-n $(TEST_WORKERS) --dist loadfile)

clean-reports:
	rm -rf reports
