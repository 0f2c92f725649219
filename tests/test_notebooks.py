"""Notebooks: committed without outputs, paired with their py:percent scripts, each executes through papermill."""
import json
import re
from pathlib import Path

import jupytext
import nbformat
import pandas as pd
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
    from evalkit.publish.analysis import analyze
    from evalkit.publish.experiment import load_experiment

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
    stderr = ["".join(o.get("text", "")) for c in nb.cells for o in c.get("outputs", []) if o.get("name") == "stderr"]
    assert stderr == [], f"{path.name} writes to stderr: {stderr[:2]}"
    text = _text(nb)
    assert "**Next.**" in text  # every notebook ends with where to go next
    # no raw repr of evalkit's records (a reader saw WeakestClaim(...), Score(...) and a dict of strings)
    raw = re.findall(r"\b(?:Score|WeakestClaim|\w+Details)\(|\{'\w+': '", text)
    assert not raw, f"{path.name} shows a raw repr: {raw[:3]}"
    numbers = json.loads((report_dirs[which] / "metrics.json").read_text())
    if path.stem in ("01_relevance", "02_completeness", "03_hallucination"):  # worked on the data's own rows
        metric = path.stem.split("_", 1)[1]
        assert f"#### typical: {metric} = " in text and f"#### failing: {metric} = " in text
        assert {"01_relevance": "S_Jaccard", "02_completeness": "completeness = ",
                "03_hallucination": "S_claims = unsupported / anchors"}[path.stem] in text
        assert "S_hall = " not in text  # the fixed example (its "S_hall = ..." line) is gone
    if path.stem in ("06_calibration", "08_report"):  # the calibration it prints is metrics.json's
        assert numbers["calibration"]["summary"][2] in text and "Skipped" not in text.split("Sections not shown")[0]
    if path.stem == "06_calibration":  # "How many hallucinations, really?": the three estimates and their widths
        assert "40 of 84 rows labelled at random; the rate of hallucinated from every label: 0.310" in text
        assert all(m in text for m in ("ppi", "labels_only", "metric_only", "covers the rate from every label"))
        # the lab states Youden's threshold and the guaranteed one (or that the labels cannot carry it)
        assert "Youden's threshold: flag" in text and "guaranteed threshold: " in text
        html = "".join("".join(o.get("data", {}).get("text/html", "")) for c in nb.cells for o in c.get("outputs", []))
        assert "Mean width of the 95% interval of the label&#x27;s rate against the number of random labels" in html \
            or "Mean width of the 95% interval of the label's rate against the number of random labels" in html
    if path.stem in ("07_compare_systems", "08_report"):
        assert f"{numbers['comparison']['system_b']}" in text and "paired on" in text
    if path.stem == "07_compare_systems":  # "What this means" agrees with metrics.json's table, counted here
        table = numbers["comparison"]["table"]
        found = [r for r in table if r["p_holm"] is not None and r["p_holm"] < 0.05 and not r["small"]]
        assert f"**{len(found)} of {len(table)} metrics** differ" in text
        assert all(f"`{r['metric']}`: " in text for r in found) and "**Which is better.**" in text
    if path.stem == "03_hallucination":  # grounding_risk's evidence on the data's own riskiest row, in words
        risky = pd.read_parquet(report_dirs[which] / "results.parquet")
        top = risky.loc[risky["grounding_risk"].idxmax()]
        assert f"id {top['id']}: P(hallucinated) = {top['grounding_risk']:.3f}" in text
        assert "The support model's weakest claim, P(supported) = " in text
    if path.stem == "08_report":  # the appendix drops a column that is empty on every row (error, here)
        html_out = "".join("".join(o.get("data", {}).get("text/html", "")) for c in nb.cells
                           for o in c.get("outputs", []))
        assert numbers["errors"] == 0 and ">answer</th>" in html_out and ">error</th>" not in html_out
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
    assert (ROOT / "experiments" / "figures" / "summaries" / "09_twin_lock_heatmap.png").exists()  # beside it


@pytest.mark.parametrize("name", ["00_quickstart", "03_hallucination", "04_reference_metrics", "06_calibration",
                                  "07_compare_systems", "08_report"])
def test_notebook_opened_alone_writes_nothing_to_stderr(name, tmp_path):
    """Each notebook as a reader opens it in Jupyter (no report, the default experiment): no error and no
    stderr (05 wrote a warning there that its run inside the report never showed). 01, 02, 05 and 09 are
    opened alone by the tests around this one, with the same check."""
    import papermill as pm

    out = tmp_path / f"{name}.ipynb"
    pm.execute_notebook(str(ROOT / "notebooks" / f"{name}.ipynb"), str(out), kernel_name="python3",
                        progress_bar=False, cwd=str(ROOT / "notebooks"),
                        parameters={"n_resamples": 50} if name[:2] in ("03", "04", "06") else {})
    nb = nbformat.read(out, as_version=4)
    assert not [o for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    stderr = ["".join(o.get("text", "")) for c in nb.cells for o in c.get("outputs", []) if o.get("name") == "stderr"]
    assert stderr == [], f"{name} opened alone writes to stderr: {stderr[:2]}"


def test_judged_notebook_demonstrates_the_scripted_judge_when_opened_alone(tmp_path):
    """Opened on its own with no judge configured, 05 scores the sample through the scripted judge server and
    says so; its numbers then come from real HTTP calls (the usage table), not from the report."""
    import papermill as pm

    out = tmp_path / "05.ipynb"
    pm.execute_notebook(str(ROOT / "notebooks" / "05_judged_metrics.ipynb"), str(out), kernel_name="python3",
                        progress_bar=False, cwd=str(ROOT / "notebooks"), parameters={"n_resamples": 50})
    nb = nbformat.read(out, as_version=4)
    assert not [o for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    stderr = ["".join(o.get("text", "")) for c in nb.cells for o in c.get("outputs", []) if o.get("name") == "stderr"]
    assert stderr == [], f"05 opened alone writes to stderr: {stderr[:2]}"  # it re-scored old scores as inputs
    text = _text(nb)
    assert "using the scripted judge server" in text and "judge: openai-chat:scripted" in text
    assert "faithfulness" in text and "ROC AUC" in text
    # its "What this means" reads the judged numbers it showed, not the report's (which has none of them)
    assert "No metric of this notebook has values" not in text and "- **`faithfulness`**" in text


def _own_experiment(folder: Path) -> Path:
    """An experiment of one's own in a scratch folder: the sample's rows copied there, three metrics."""
    import shutil

    import yaml

    shutil.copy(ROOT / "data" / "sample_rag.jsonl", folder / "mine.jsonl")
    exp = folder / "mine.yaml"
    exp.write_text(yaml.safe_dump({"name": "mine", "data": "mine.jsonl",
                                   "metrics": ["relevance", "completeness", "hallucination"]}))
    return exp


def test_a_second_run_of_a_notebook_reuses_the_first_ones_scores(tmp_path):
    """Opened alone, the first notebook scores the experiment into .evalkit_cache beside it; the next run (of the
    same or another notebook) reads those scores and does not score again."""
    import papermill as pm

    exp = _own_experiment(tmp_path)
    texts = []
    for k, name in enumerate(("01_relevance", "02_completeness")):
        out = tmp_path / f"run{k}.ipynb"
        pm.execute_notebook(str(ROOT / "notebooks" / f"{name}.ipynb"), str(out), kernel_name="python3",
                            progress_bar=False, cwd=str(tmp_path), parameters={"experiment_path": str(exp)})
        nb = nbformat.read(out, as_version=4)
        assert not [o for c in nb.cells for o in c.get("outputs", []) if o.get("name") == "stderr"]
        # the first run scored with a progress bar, cleared when done: no progress output stays in the notebook
        assert not [o for c in nb.cells for o in c.get("outputs", [])
                    if "application/vnd.jupyter.widget-view+json" in o.get("data", {})]
        texts.append(_text(nb))
        cached = sorted((tmp_path / ".evalkit_cache" / "notebooks").glob("*/results.parquet"))
        assert len(cached) == 1
        if k == 0:
            first_mtime = cached[0].stat().st_mtime_ns
    assert "scored now and kept in the notebook cache" in texts[0]
    assert "read from the notebook cache" in texts[1]
    assert cached[0].stat().st_mtime_ns == first_mtime  # the second run wrote nothing: it scored nothing
    assert (tmp_path / "figures" / "mine").is_dir()  # figures beside the experiment file


def test_the_scripted_judges_demonstration_scores_are_kept_and_read_back(tmp_path, sample_df, capsys, judge_server,
                                                                          monkeypatch):
    """05 and 09 opened alone score a demonstration with the scripted judge server: the first opening scores and
    keeps the scores in the notebook cache, the next reads them (and starts no server); a configured judge's
    scores are never kept (its own reply cache serves it)."""
    import os

    from evalkit.publish.notebook import NotebookRun

    for name in [k for k in os.environ if k.startswith("EVALKIT_JUDGE_")]:
        monkeypatch.delenv(name)
    run = NotebookRun(results=sample_df.head(4), figures_dir=None, config=None, cache_dir=tmp_path / "key")
    first = run.scored_by_judge(["faithfulness"], {})
    said_first = capsys.readouterr().out
    second = run.scored_by_judge(["faithfulness"], {})
    said_second = capsys.readouterr().out
    assert "using the scripted judge server at http://127.0.0.1:" in said_first
    assert "read from the notebook cache" in said_second and "http://" not in said_second
    pd.testing.assert_frame_equal(first.reset_index(drop=True), second, check_dtype=False)
    assert first["faithfulness"].notna().all()
    assert second.attrs["evalkit"]["judge"]["signature"] == first.attrs["evalkit"]["judge"]["signature"]
    assert len(list((tmp_path / "key").iterdir())) == 1  # one entry
    other = run.scored_by_judge(["faithfulness"], {}, rows=2)  # other rows: another entry, scored now
    assert len(other) == 2 and "at http://127.0.0.1:" in capsys.readouterr().out
    configured = {"base_url": judge_server.url, "model": "scripted", "cache_path": None}
    run.scored_by_judge(["faithfulness"], configured, rows=1)
    assert len(list((tmp_path / "key").iterdir())) == 2  # the configured judge's scores were not kept


def test_the_cache_key_follows_the_data_and_the_package(tmp_path):
    from evalkit.publish.experiment import load_experiment
    from evalkit.publish.notebook import scoring_key

    exp = _own_experiment(tmp_path)
    k1 = scoring_key(load_experiment(exp))
    assert scoring_key(load_experiment(exp)) == k1
    with (tmp_path / "mine.jsonl").open("a") as f:
        f.write('{"question": "Q?", "answer": "A.", "contexts": ["A."]}\n')
    assert scoring_key(load_experiment(exp)) != k1  # new data: scored again


def test_report_pages_draw_formulas_as_mathml_and_load_nothing(tmp_path):
    from evalkit.publish.report import to_html

    page = to_html(ROOT / "notebooks" / "01_relevance.ipynb", "sig", "t")
    assert "<math" in page and "$$" not in page
    assert "cdnjs" not in page.split("<body")[0] and 'src="http' not in page
    assert "\\text{relevance}" not in page  # the TeX source was converted, not shown


def test_saving_a_committed_notebook_keeps_it_as_committed(tmp_path):
    """The Jupyter pre-save hook on a notebook with outputs, as Lab sends it: what is written equals the
    committed file; the same notebook elsewhere is saved as sent."""
    from evalkit.publish.jupyter_hooks import clean_committed_notebook

    committed = ROOT / "notebooks" / "06_calibration.ipynb"
    nb = json.loads(committed.read_text())
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            cell["outputs"], cell["execution_count"] = [{"output_type": "stream", "name": "stdout", "text": "x"}], 7
    nb["metadata"]["kernelspec"]["display_name"] = "Python 3 (ipykernel)"
    nb["metadata"]["language_info"] = {"name": "python", "version": "3.11.7"}
    manager = type("CM", (), {"root_dir": str(ROOT)})()
    model = {"type": "notebook", "content": json.loads(json.dumps(nb))}
    clean_committed_notebook(model=model, path="notebooks/06_calibration.ipynb", contents_manager=manager)
    assert nbformat.writes(nbformat.from_dict(model["content"])) + "\n" == committed.read_text()
    elsewhere = {"type": "notebook", "content": json.loads(json.dumps(nb))}
    clean_committed_notebook(model=elsewhere, path="mine/06_calibration.ipynb", contents_manager=manager)
    assert elsewhere["content"] == nb


def test_every_notebook_reads_the_experiments_positive_class():
    """03 called run.label("hallucinated") without positive and refused a Y/N label ("not a binary label: values
    seen 'N', 'Y'") while 06 read the experiment's `positive: Y`: the run now supplies it for its label."""
    import pandas as pd

    from evalkit.publish.notebook import NotebookRun

    res = pd.DataFrame({"hallucinated": ["Y", "N", None, "Y"]})
    run = NotebookRun(res, None, None, metrics={"calibration": {"label": "hallucinated", "positive": "Y"}})
    assert run.label("hallucinated", why="x").tolist() == [True, False, pd.NA, True]
    other = NotebookRun(res, None, None, metrics={"calibration": {"label": "correct", "positive": "Y"}})
    assert other.label("hallucinated", why="x", positive="N").tolist() == [False, True, pd.NA, False]
