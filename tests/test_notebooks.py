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


@pytest.fixture(scope="session")
def scored_results(tmp_path_factory, sample_results):
    p = tmp_path_factory.mktemp("nb") / "results.parquet"
    r = sample_results.copy()
    r.attrs.clear()
    r.to_parquet(p)
    return p


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_executes_with_papermill(path, scored_results, tmp_path):
    import papermill as pm

    out = tmp_path / path.name
    pm.execute_notebook(str(path), str(out), kernel_name="python3", progress_bar=False, cwd=str(ROOT),
                        parameters={"results_path": str(scored_results), "output_dir": str(tmp_path),
                                    "n_resamples": 50, "seed": 1})
    nb = nbformat.read(out, as_version=4)
    errors = [o for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors
    assert any(c.get("outputs") for c in nb.cells if c.cell_type == "code")


def test_notebook_scores_data_when_opened_alone(tmp_path):
    """Without results_path the notebook scores the data itself (as in Jupyter)."""
    import papermill as pm

    out = tmp_path / "00.ipynb"
    pm.execute_notebook(str(ROOT / "notebooks" / "00_quickstart.ipynb"), str(out), kernel_name="python3",
                        progress_bar=False, cwd=str(ROOT / "notebooks"), parameters={"output_dir": str(tmp_path)})
    assert (tmp_path / "figures" / "00_verdicts.png").exists()
