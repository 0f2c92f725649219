"""Notebooks: committed without outputs, paired with their py:percent scripts, each executes through papermill."""
import json
from pathlib import Path

import jupytext
import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def test_numbered_notebooks_exist():
    names = [p.stem for p in NOTEBOOKS]
    assert names[0] == "00_quickstart" and "06_calibration" in names and "08_report" in names


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_committed_without_outputs(path):
    nb = json.loads(path.read_text())
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            assert cell.get("outputs") == [] and cell.get("execution_count") is None, f"{path.name} has outputs"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_one_parameters_cell_and_paired_script_in_sync(path):
    nb = nbformat.read(path, as_version=4)
    tagged = [c for c in nb.cells if "parameters" in c.get("metadata", {}).get("tags", [])]
    assert len(tagged) == 1
    script = jupytext.read(path.with_suffix(".py"))
    assert [c.source for c in script.cells] == [c.source for c in nb.cells], "run: jupytext --sync notebooks/*.py"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_metric_logic_in_notebooks(path):
    src = "\n".join(c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code")
    for banned in ("TfidfVectorizer", "spacy.load", "def ", "re.compile", "lambda"):
        assert banned not in src, f"{path.name} contains {banned!r}: metric logic belongs in evalkit/"


def _report_dir(base: Path, results, experiment: Path) -> Path:
    """A report folder as `evalkit report` leaves it, built from already-scored results."""
    from evalkit.analysis import analyze
    from evalkit.experiment import load_experiment

    r = results.copy()
    r.attrs.clear()
    r.to_parquet(base / "results.parquet")
    numbers = analyze(r, load_experiment(experiment))
    (base / "metrics.json").write_text(json.dumps(numbers))
    (base / "signature.json").write_text(json.dumps({"signature": "evalkit:test|seed:0"}))
    (base / "figures").mkdir()
    return base


@pytest.fixture(scope="session")
def report_dirs(tmp_path_factory, sample_results):
    import evalkit

    default = _report_dir(tmp_path_factory.mktemp("default"), sample_results, ROOT / "experiments" / "default.yaml")
    summ = evalkit.evaluate(evalkit.load(ROOT / "data" / "sample_summaries.jsonl"), ["twin_lock", "judge_lock"],
                            progress=False)
    summaries = _report_dir(tmp_path_factory.mktemp("summaries"), summ, ROOT / "experiments" / "summaries.yaml")
    return {"default": default, "summaries": summaries}


def _text(nb) -> str:
    out = []
    for c in nb.cells:
        for o in c.get("outputs", []):
            out.append(o.get("text", "") if o.get("output_type") == "stream" else
                       "".join(o.get("data", {}).get("text/plain", "")) + "".join(o.get("data", {}).get("text/markdown", "")))
    return "\n".join(out)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_executes_with_papermill(path, report_dirs, tmp_path):
    import papermill as pm

    which = "summaries" if path.stem.startswith("09") else "default"
    exp = ROOT / "experiments" / f"{which}.yaml"
    out = tmp_path / path.name
    pm.execute_notebook(str(path), str(out), kernel_name="python3", progress_bar=False, cwd=str(tmp_path),
                        parameters={"experiment_path": str(exp), "report_dir": str(report_dirs[which]),
                                    "n_resamples": 50})
    nb = nbformat.read(out, as_version=4)
    errors = [o for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors
    text = _text(nb)
    numbers = json.loads((report_dirs[which] / "metrics.json").read_text())
    if path.stem in ("06_calibration", "08_report"):  # the calibration it prints is metrics.json's
        assert numbers["calibration"]["summary"][2] in text and "Skipped" not in text.split("Sections not shown")[0]
    if path.stem in ("07_compare_systems", "08_report"):
        assert f"{numbers['comparison']['system_b']}" in text and "paired on" in text
    if path.stem == "00_quickstart":
        assert "84 rows, 2 system(s), 42 ids; rows with errors: 0" in text and "A PASS answer" in text
        assert "The contexts support" in text and "<- decided" in text  # the rows' evidence, in words and marked
    if path.stem == "05_judged_metrics":  # inside a report it shows only what the report scored
        assert "were not scored in this report's run" in text


def test_notebook_scores_data_when_opened_alone(tmp_path):
    """Without report_dir the notebook scores its experiment's data itself (as in Jupyter)."""
    import papermill as pm

    out = tmp_path / "09.ipynb"
    pm.execute_notebook(str(ROOT / "notebooks" / "09_summary_scorers.ipynb"), str(out), kernel_name="python3",
                        progress_bar=False, cwd=str(ROOT / "notebooks"))
    nb = nbformat.read(out, as_version=4)
    assert not [o for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert (ROOT / "reports" / "interactive" / "summaries" / "figures" / "09_twin_lock_heatmap.png").exists()


def test_judged_notebook_demonstrates_the_scripted_judge_when_opened_alone(tmp_path):
    """Opened on its own with no judge configured, 05 scores the sample through the scripted judge server and
    says so; its numbers then come from real HTTP calls (the usage table), not from the report."""
    import papermill as pm

    out = tmp_path / "05.ipynb"
    pm.execute_notebook(str(ROOT / "notebooks" / "05_judged_metrics.ipynb"), str(out), kernel_name="python3",
                        progress_bar=False, cwd=str(ROOT / "notebooks"), parameters={"n_resamples": 50})
    nb = nbformat.read(out, as_version=4)
    assert not [o for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    text = _text(nb)
    assert "using the scripted judge server" in text and "judge: openai-chat:scripted" in text
    assert "faithfulness" in text and "ROC AUC" in text
