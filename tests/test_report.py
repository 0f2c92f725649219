"""`evalkit report`: the report folder, determinism, escaping, failure handling."""
import hashlib
import json
import os
import re
from pathlib import Path

import pandas as pd
import pytest
import yaml

from evalkit.publish.experiment import ExperimentError, load_experiment
from evalkit.publish.report import ReportError, run_report

ROOT = Path(__file__).resolve().parents[1]
QUICK = {"n_resamples": 50}


@pytest.fixture(scope="module")
def two_reports(tmp_path_factory):
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
    assert m["rows"] == 84 and m["errors"] == 0 and m["systems"] == ["rag-a", "rag-b"]
    assert {"overall", "by_system", "verdicts", "calibration", "comparison", "sections"} <= set(m)
    from sklearn.metrics import roc_auc_score

    res = pd.read_parquet(a / "results.parquet").dropna(subset=["hallucination"])
    auc = roc_auc_score(res["hallucinated"].astype(bool), res["hallucination"].astype(float))
    assert m["calibration"]["roc_auc"]["estimate"] == pytest.approx(auc, abs=1e-9)  # same rows protocol
    assert m["calibration"]["n_used"] == len(res)
    assert m["sections"]["judge"]["applies"] is False and "configure a judge" in m["sections"]["judge"]["note"]
    assert m["fact_checks"]["unmatched"] == [] and m["fact_checks"]["rules"] > 0
    cmp = m["comparison"]
    assert (cmp["system_a"], cmp["system_b"], cmp["pair_on"]) == ("rag-a", "rag-b", "id")
    assert {r["metric"] for r in cmp["table"]} >= {"hallucination", "correct"}


def test_html_numbers_are_the_metrics_json_numbers(two_reports):
    a, _, _ = two_reports
    m = json.loads((a / "metrics.json").read_text())
    html = (a / "report.html").read_text()
    cal = m["calibration"]
    for line in cal["summary"]:  # the calibration lines printed by the same computation
        assert line.split(":")[0] in html
    assert cal["protocol"] in html and "System comparison" in html and "rag-b</strong> minus <strong>rag-a" in html
    # the verdict section names the profile that decided (#38): the default (evalkit); the default run scores the
    # seed's triad too, so it says on how many answers the seed's rules decide otherwise, counted here by applying
    # the seed profile to the saved results and comparing with the saved verdicts
    from evalkit.base.config import VerdictThresholds
    from evalkit.decide.verdict import apply_verdicts

    res = pd.read_parquet(a / "results.parquet")
    seed = apply_verdicts(res.drop(columns=["verdict", "verdict_rule"]), VerdictThresholds(named="seed"))[0]
    differ = int((seed["verdict"] != res["verdict"]).sum())
    assert m["verdict_profile"] == {"profile": "evalkit", "other": "seed", "compared": True,
                                    "other_metrics": ["hallucination", "relevance", "completeness"],
                                    "rows": 84, "disagree": differ}
    assert "<strong>evalkit</strong> profile decided these verdicts" in html
    assert f"decides {differ} of the 84 answers differently" in html


def test_honest_protocol_reaches_the_page(tmp_path):
    exp = yaml.safe_load((ROOT / "experiments" / "default.yaml").read_text())
    exp.update({"name": "honest", "data": str(ROOT / "data" / "sample_rag.jsonl"),
                "scoring": str(ROOT / "experiments" / "default.config.yaml"), "fact_checks": None,
                "metrics": ["relevance", "completeness", "hallucination"]})
    exp["calibration"]["split"] = "seeded"
    p = tmp_path / "honest.yaml"
    p.write_text(yaml.safe_dump(exp))
    html_path = run_report(p, out_root=tmp_path / "r", figures_root=tmp_path / "figures", notebooks=["08_report"],
                           overrides=QUICK, log=lambda m: None)
    m = json.loads((html_path.parent / "metrics.json").read_text())
    assert m["calibration"]["protocol"].startswith("seeded split (seed 0")
    html = html_path.read_text()
    assert m["calibration"]["protocol"] in html and "reported on 42 held-out rows" in html
    assert "same rows (optimistic)" not in html


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


def test_failing_notebook_names_notebook_and_cell(tmp_path):
    """Your own notebook (a path in the experiment) runs like a shipped one; its failure names notebook and cell."""
    import nbformat

    nb = nbformat.read(ROOT / "notebooks" / "00_quickstart.ipynb", as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell("raise ValueError('deliberate failure')"))
    nbformat.write(nb, tmp_path / "99_broken.ipynb")
    exp = tmp_path / "broken.yaml"
    exp.write_text(yaml.safe_dump({"name": "broken", "data": str(ROOT / "data" / "sample_rag.jsonl"),
                                   "notebooks": ["99_broken.ipynb"], "metrics": ["relevance"]}))
    with pytest.raises(ReportError, match=r"notebook 99_broken.ipynb failed at cell .*ValueError: deliberate failure"):
        run_report(exp, out_root=tmp_path / "r", figures_root=tmp_path / "f", log=lambda m: None)
    assert (tmp_path / "r" / "broken" / "notebooks" / "99_broken.ipynb").exists()  # partial output kept
    assert (tmp_path / "r" / "broken" / "results.parquet").exists()


def test_experiment_validation(tmp_path):
    p = tmp_path / "e.yaml"
    p.write_text("name: x\ndata: d.jsonl\nmetricz: []\n")
    with pytest.raises(ExperimentError, match=r"unknown key\(s\) \['metricz'\]"):
        load_experiment(p)
    p.write_text("data: d.jsonl\n")
    with pytest.raises(ExperimentError, match="missing required key 'name'"):
        load_experiment(p)
    p.write_text("name: x\ndata: d.jsonl\nnotebooks: [42_nope]\n")
    with pytest.raises(ExperimentError, match="notebook '42_nope' not found"):
        load_experiment(p)
    p.write_text("name: x\ndata: d.jsonl\ncalibration: {labl: y}\n")
    with pytest.raises(ExperimentError, match=r"calibration has unknown key\(s\) \['labl'\]"):
        load_experiment(p)
    p.write_text("name: x\ndata: d.jsonl\nscoring: nope.yaml\n")
    with pytest.raises(ExperimentError, match="scoring: no such file"):
        load_experiment(p)


def test_experiment_paths_are_relative_to_the_file(tmp_path):
    (tmp_path / "sub").mkdir()
    p = tmp_path / "sub" / "e.yaml"
    p.write_text("name: x\ndata: ../d.jsonl\nfact_checks: rules.yaml\nthresholds: /abs/p.yaml\n")
    exp = load_experiment(p)
    assert exp.data == str(tmp_path / "d.jsonl") and exp.fact_checks == str(tmp_path / "sub" / "rules.yaml")
    assert exp.thresholds == "/abs/p.yaml"


def test_fact_check_rules_that_match_no_row_are_reported(tmp_path):
    rules = tmp_path / "rules.yaml"
    rules.write_text(yaml.safe_dump({"rules": [
        {"name": "premium", "applies_to": {"ids": ["q14"]}, "numbers": ["$604"]},
        {"name": "ghost", "applies_to": {"ids": ["zz99"]}, "numbers": ["1"]}]}))
    exp = tmp_path / "e.yaml"
    exp.write_text(yaml.safe_dump({"name": "fc", "data": str(ROOT / "data" / "sample_rag.jsonl"),
                                   "fact_checks": "rules.yaml", "metrics": ["fact_checks"]}))
    logs = []
    html_path = run_report(exp, out_root=tmp_path / "r", figures_root=tmp_path / "figures", notebooks=["08_report"],
                           overrides=QUICK, log=logs.append)
    m = json.loads((html_path.parent / "metrics.json").read_text())
    assert m["fact_checks"]["unmatched"] == ["ghost"]
    assert any("1 of 2 rules" in line and "ghost" in line for line in logs)
    # off a terminal (pytest captures stderr) scoring says what it did, one line per metric: never minutes of silence
    assert "evalkit report fc: scoring 84 rows of" in logs[0]
    assert any(re.fullmatch(r"  scored fact_checks \(1/1\) on 84 rows in \d+\.\d s", line) for line in logs), logs[:4]
    res = pd.read_parquet(html_path.parent / "results.parquet")
    assert res["fact_checks"].notna().sum() == int((res["id"] == "q14").sum())  # only q14's rows are checked


def test_the_example_scoring_config_holds_no_dataset_rules():
    cfg = yaml.safe_load((ROOT / "experiments" / "default.config.yaml").read_text())
    assert "fact_checks" not in cfg


def test_split_lesson_reads_the_two_protocols_numbers():
    from types import SimpleNamespace as NS

    from evalkit.decide.calibrate.core import Interval
    from evalkit.publish.notebook import split_lesson

    def result(t, p, r):
        return NS(threshold=t, at_threshold=NS(precision=Interval(p, None, None), recall=Interval(r, None, None)))

    text = split_lesson(result(0.5, 0.905, 0.95), result(0.2, 0.625, 0.9))
    assert "moves from 0.5 to 0.2" in text and "precision is 0.905" in text and "precision is 0.625" in text
    assert "overstate" in text
    steady = split_lesson(result(0.4, 0.8, 0.8), result(0.4, 0.78, 0.79))
    assert "stays at 0.4" in steady and "transfers" in steady
    assert "Only one protocol" in split_lesson(result(0.4, 0.8, 0.8), None)


def test_every_figure_has_a_caption_with_numbers_and_none_repeats(two_reports):
    import re

    a, _, _ = two_reports
    html = (a / "report.html").read_text()
    figures = re.findall(r'<figure class="evalkit-figure".*?</figure>', html, flags=re.S)
    assert len(figures) == html.count('src="data:image/png;base64') >= 3
    for fig in figures:
        alt = re.search(r'alt="([^"]*)"', fig).group(1)
        caption = re.search(r"<figcaption[^>]*>(.*?)</figcaption>", fig, flags=re.S).group(1)
        assert alt == caption and re.search(r"\d", caption), caption  # a caption states numbers
    m = json.loads((a / "metrics.json").read_text())
    means = next(f for f in figures if "Bars show means" in f)
    rel = next(r for r in m["by_system"] if r["metric"] == "relevance" and r["system"] == "rag-a")
    assert f"rag-a {rel['mean']:.3g} [{rel['low']:.3g}, {rel['high']:.3g}]" in means  # the numbers of metrics.json
    digests = [hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted((a / "figures").glob("*.png"))]
    assert len(digests) == len(set(digests)), "two figures of the report are byte-identical"


def test_report_console_is_quiet(tmp_path):
    import subprocess
    import sys

    exp = yaml.safe_load((ROOT / "experiments" / "default.yaml").read_text())
    exp.update({"name": "quiet", "data": str(ROOT / "data" / "sample_rag.jsonl"),
                "scoring": str(ROOT / "experiments" / "default.config.yaml"), "fact_checks": None,
                "metrics": ["relevance", "completeness", "hallucination", "semantic_similarity"],
                "notebooks": ["00_quickstart", "08_report"]})  # semantic_similarity loads a transformer (and its
    # loader's bar); two notebooks, so that the first one's kernel client is collected while the run goes on
    p = tmp_path / "quiet.yaml"
    p.write_text(yaml.safe_dump(exp))
    r = subprocess.run([sys.executable, "-m", "evalkit.cli", "report", str(p), "--out", str(tmp_path / "r"),
                        "--resamples", "50"], capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert r.returncode == 0, r.stderr
    noise = [line for line in (r.stdout + r.stderr).splitlines()
             if any(k in line for k in ("IPKernelApp", "Alternative text", "WARNING", "Loading weights", "zmq"))]
    assert not noise, noise


# what only the dev extra (ragas, dask, lab, test tools) installs: `make report` installs the report extra alone
_NOT_IN_THE_REPORT_EXTRA = ("jupyterlab", "ipywidgets", "dask", "distributed", "playwright", "ragas", "langchain",
                            "langchain_core", "langchain_community", "langchain_openai", "openai", "rapidfuzz",
                            "rouge_score", "sacrebleu", "sentence_transformers", "bert_score", "pytest", "xdist")


def test_the_default_report_runs_with_the_report_extra_alone(tmp_path):
    """`make report` installs the report extra only: the default report, run where the packages only `dev` adds
    cannot be imported (in the command and in every notebook's kernel: a sitecustomize that marks them missing,
    as an absent package reads to importlib), scores and writes every notebook without an import error."""
    import subprocess
    import sys

    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(
        "import sys\nfor name in %r:\n    sys.modules[name] = None  # import fails; find_spec says absent\n"
        % (_NOT_IN_THE_REPORT_EXTRA,))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)])}
    probe = subprocess.run([sys.executable, "-c", "import importlib.util as u; import evalkit.metrics.ragas as r; "
                            "print(u.find_spec('ragas'), r.available())"], env=env, capture_output=True, text=True)
    assert probe.stdout.split() == ["None", "False"], probe.stderr  # the blocking works as an absent package
    r = subprocess.run([sys.executable, "-m", "evalkit.cli", "report", str(ROOT / "experiments" / "default.yaml"),
                        "--out", str(tmp_path / "r"), "--resamples", "50"], capture_output=True, text=True,
                       cwd=tmp_path, env=env, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "[8/8] 08_report done" in r.stdout + r.stderr
    (html,) = (tmp_path / "r").rglob("report.html")
    page = html.read_text(encoding="utf-8")
    for word in ("ModuleNotFoundError", "ImportError", "Traceback", "IProgress"):
        assert word not in page, word


def _pdf_width_pt(path: Path) -> float:
    """The page width of a one-page PDF, from its MediaBox (points)."""
    import re

    box = re.search(rb"/MediaBox\s*\[\s*([-\d.]+)\s+([-\d.]+)\s+([-\d.]+)\s+([-\d.]+)\s*\]", path.read_bytes())
    return float(box.group(3)) - float(box.group(1))


def test_print_figures_writes_every_figure_at_both_column_widths(tmp_path):
    exp = yaml.safe_load((ROOT / "experiments" / "default.yaml").read_text())
    exp.update({"name": "print", "data": str(ROOT / "data" / "sample_rag.jsonl"), "print_figures": True,
                "scoring": str(ROOT / "experiments" / "default.config.yaml"), "fact_checks": None,
                "metrics": ["relevance", "completeness", "hallucination"]})
    p = tmp_path / "print.yaml"
    p.write_text(yaml.safe_dump(exp))
    html_path = run_report(p, out_root=tmp_path / "r", figures_root=tmp_path / "figures", notebooks=["08_report"],
                           overrides=QUICK, log=lambda m: None)
    figs = html_path.parent / "figures"
    page = sorted(f.stem for f in figs.glob("*.png"))
    assert page  # the report drew figures, and each has its print versions
    for stem in page:
        for name, width_in in ((f"{stem}.pdf", 3.5), (f"{stem}_wide.pdf", 7.0)):
            assert (figs / "print" / name).exists(), name
            assert _pdf_width_pt(figs / "print" / name) == pytest.approx(width_in * 72, abs=1.0), name
            assert (figs / "print" / name).with_suffix(".svg").exists()


def test_print_figures_must_be_a_boolean(tmp_path):
    exp = yaml.safe_load((ROOT / "experiments" / "default.yaml").read_text())
    exp.update({"data": str(ROOT / "data" / "sample_rag.jsonl"), "print_figures": "yes",
                "scoring": str(ROOT / "experiments" / "default.config.yaml"), "fact_checks": None})
    p = tmp_path / "bad.yaml"
    p.write_text(yaml.safe_dump(exp))
    with pytest.raises(ExperimentError, match="print_figures must be true or false"):
        load_experiment(p)


def test_metrics_json_keeps_each_tables_columns_in_order(tmp_path):
    """A table read back from metrics.json starts with its group and metric (it came back alphabetical:
    count_true, counts, high, low, ... with the system column off-screen in notebooks 00 and 07)."""
    import json

    import pandas as pd

    from evalkit.decide.aggregate import summary
    from evalkit.publish.report import _write_json

    df = pd.DataFrame({"system": ["a", "a", "b", "b"], "relevance": [0.1, 0.3, 0.5, 0.7],
                       "exact_match": [True, False, True, True]})
    _write_json(tmp_path / "metrics.json", {"by_system": summary(df, by="system", n_resamples=0).to_dict("records")})
    back = pd.DataFrame(json.loads((tmp_path / "metrics.json").read_text())["by_system"])
    assert list(back.columns) == list(summary(df, by="system", n_resamples=0).columns)
    assert list(back.columns[:2]) == ["system", "metric"]


def test_the_report_kernel_is_not_interrupted_when_it_is_stopped():
    """jupyter_client interrupts a kernel before asking it to shut down; an interrupt landing while the idle kernel
    handles a message printed "[IPKernelApp] ERROR | KeyboardInterrupt caught in kernel." on a report's console
    (test_report_console_is_quiet failed so once in CI). The report's kernel manager skips that interrupt, and
    still interrupts a kernel that is asked to be interrupted. A real kernel, started and stopped."""
    import signal

    from evalkit.publish.report import _curve_available, _kernel_manager

    import asyncio

    from jupyter_client.manager import AsyncKernelManager

    def interrupts(manager) -> int:
        sent = []

        class Spy(manager):
            async def _async_signal_kernel(self, signum):
                sent.append(signum)
                await super()._async_signal_kernel(signum)

        async def start_interrupt_stop() -> bool:
            km = Spy(kernel_name="python3")
            await km.start_kernel()
            try:
                await km.interrupt_kernel()
                assert sent == [signal.SIGINT]
            finally:
                await km.shutdown_kernel()
            return await km.is_alive()

        assert asyncio.run(start_interrupt_stop()) is False
        return sent.count(signal.SIGINT)

    assert interrupts(AsyncKernelManager) == 2  # jupyter_client's own: the asked-for one, and one on the way down
    assert interrupts(_kernel_manager(encrypted=_curve_available())) == 1


def _notebook(path, code: str) -> None:
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(code)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, str(path))


def test_the_kernel_process_stderr_stays_off_the_console_and_is_told_when_it_dies(tmp_path, capfd):
    """What a kernel process writes to its own stderr (its logging; zmq's traceback when a socket closes under a
    send while it shuts down, seen once on a CI console) does not reach the report's console; a kernel that dies
    has its last lines in the error. A real kernel, writing to file descriptor 2."""
    from evalkit.publish.report import ReportError, _execute

    _notebook(tmp_path / "noisy.ipynb", "import os\nos.write(2, b'KERNEL-NOISE\\n')\nprint('fine')")
    _execute(tmp_path / "noisy.ipynb", tmp_path / "noisy.out.ipynb", {}, tmp_path)
    assert "fine" in (tmp_path / "noisy.out.ipynb").read_text()
    assert "KERNEL-NOISE" not in capfd.readouterr().err
    _notebook(tmp_path / "dies.ipynb", "import os\nos.write(2, b'last words before dying\\n')\nos._exit(3)")
    with pytest.raises(ReportError, match="the kernel's last words: last words before dying"):
        _execute(tmp_path / "dies.ipynb", tmp_path / "dies.out.ipynb", {}, tmp_path)
    assert "last words" not in capfd.readouterr().err
