"""`evalkit report`: the report folder, determinism, escaping, failure handling."""
import hashlib
import json
from pathlib import Path

import pandas as pd
import pytest
import yaml

from evalkit.report import ReportError, load_experiment, run_report

ROOT = Path(__file__).resolve().parents[1]
QUICK = {"n_resamples": 50}


@pytest.fixture(scope="module")
def two_reports(tmp_path_factory):
    import os

    os.chdir(ROOT)
    base = tmp_path_factory.mktemp("reports")
    figs = tmp_path_factory.mktemp("figures")
    exp = ROOT / "experiments" / "default.yaml"
    nbs = ["00_quickstart", "08_report"]
    a = run_report(exp, out_root=base / "a", figures_root=figs, notebooks=nbs, overrides=QUICK, log=lambda m: None)
    b = run_report(exp, out_root=base / "b", figures_root=figs, notebooks=nbs, overrides=QUICK, log=lambda m: None)
    return a.parent, b.parent, figs


def test_report_folder_contents(two_reports):
    a, _, figs = two_reports
    for name in ("report.html", "results.parquet", "metrics.json", "signature.json", "notebooks/08_report.ipynb"):
        assert (a / name).exists(), name
    assert list((a / "figures").glob("*.png")) and list((a / "figures").glob("*.svg"))
    assert sorted(p.name for p in (figs / "default").iterdir()) == sorted(p.name for p in (a / "figures").iterdir())
    sig = json.loads((a / "signature.json").read_text())
    for key in ("evalkit", "git_commit", "python", "packages", "spacy_model", "thresholds", "data_sha256", "seed",
                "judge", "signature"):
        assert key in sig
    assert sig["data_sha256"] == hashlib.sha256((ROOT / "data" / "sample_rag.jsonl").read_bytes()).hexdigest()
    html = (a / "report.html").read_text()
    assert sig["signature"].split("|")[0] in html and "evalkit-signature" in html
    assert html.count("data:image/png;base64") >= 3  # the figures are in the page, not only on disk


def test_metrics_json_content(two_reports):
    a, _, _ = two_reports
    m = json.loads((a / "metrics.json").read_text())
    assert m["rows"] == 84 and m["errors"] == 0
    assert {"overall", "by_system", "verdicts", "calibration", "comparison"} <= set(m)
    assert 0.5 < m["calibration"]["roc_auc"]["estimate"] <= 1


def test_same_experiment_twice_is_identical(two_reports):
    a, b, _ = two_reports
    assert (a / "metrics.json").read_bytes() == (b / "metrics.json").read_bytes()
    assert (a / "results.parquet").read_bytes() == (b / "results.parquet").read_bytes()
    pd.testing.assert_frame_equal(pd.read_parquet(a / "results.parquet"), pd.read_parquet(b / "results.parquet"))


def test_html_escapes_answers(two_reports):
    a, _, _ = two_reports
    html = (a / "report.html").read_text()
    assert "&lt;script&gt;alert(" in html  # the sample's adversarial answer is shown as text
    assert "<script>alert(" not in html


def test_failing_notebook_names_notebook_and_cell(tmp_path, monkeypatch):
    import nbformat

    monkeypatch.chdir(ROOT)
    nb = nbformat.read(ROOT / "notebooks" / "00_quickstart.ipynb", as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell("raise ValueError('deliberate failure')"))
    nbdir = tmp_path / "notebooks"
    nbdir.mkdir()
    nbformat.write(nb, nbdir / "99_broken.ipynb")
    import evalkit.report as rep

    monkeypatch.setattr(rep, "NOTEBOOK_DIR", nbdir)
    exp = tmp_path / "broken.yaml"
    exp.write_text(yaml.safe_dump({"name": "broken", "data": "data/sample_rag.jsonl", "notebooks": ["99_broken"],
                                   "metrics": ["relevance"]}))
    with pytest.raises(ReportError, match=r"notebook 99_broken.ipynb failed at cell .*ValueError: deliberate failure"):
        run_report(exp, out_root=tmp_path / "r", figures_root=tmp_path / "f", log=lambda m: None)
    assert (tmp_path / "r" / "broken" / "notebooks" / "99_broken.ipynb").exists()  # partial output kept
    assert (tmp_path / "r" / "broken" / "results.parquet").exists()


def test_experiment_validation(tmp_path):
    p = tmp_path / "e.yaml"
    p.write_text("name: x\ndata: d.jsonl\nmetricz: []\n")
    with pytest.raises(ReportError, match=r"unknown key\(s\) \['metricz'\]"):
        load_experiment(p)
    p.write_text("data: d.jsonl\n")
    with pytest.raises(ReportError, match="missing required key 'name'"):
        load_experiment(p)
    p.write_text("name: x\ndata: d.jsonl\nnotebooks: [42_nope]\n")
    with pytest.raises(ReportError, match="notebook '42_nope' not found"):
        load_experiment(p)
