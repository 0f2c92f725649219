"""The set-up a newcomer relies on: environment.yml agrees with pyproject, README opens with the two commands,
CI runs the README's test command."""
import re
import tomllib
from pathlib import Path

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
