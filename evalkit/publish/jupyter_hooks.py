"""Saving evalkit's own notebooks from JupyterLab leaves the committed files unchanged.

The numbered notebooks in ``evalkit/notebooks/`` are committed as jupytext pairs without outputs. Working in them
in JupyterLab runs cells, and Lab then saves outputs (with local paths), execution counts, the kernel's
``language_info`` and widget state into the ``.ipynb``. :func:`clean_committed_notebook` is a Jupyter server
``pre_save_hook`` that, for those notebooks only, saves what is committed: cell sources and metadata, no outputs,
no execution counts, and the notebook metadata reduced to the kernelspec (as committed, "Python 3" / python3) and
jupytext's pairing. Notebooks anywhere else, a copy of ours saved elsewhere included, are saved as Lab sends them.

``make setup`` installs it into the environment's Jupyter server configuration (``python -m
evalkit.jupyter_hooks --install`` merges ``{"ContentsManager": {"pre_save_hook": HOOK}}`` into
``<env>/etc/jupyter/jupyter_server_config.json``; Jupyter reads that file, not ``jupyter_server_config.d/``, for a
contents manager's settings).

Examples
--------
>>> model = {"type": "notebook", "content": {"metadata": {"language_info": {"name": "python"}}, "cells": [
...     {"cell_type": "code", "source": "1", "outputs": [{"text": "1"}], "execution_count": 3, "metadata": {}}]}}
>>> clean_notebook_content(model["content"])["cells"][0]["outputs"], model["content"]["metadata"]
([], {'kernelspec': {'display_name': 'Python 3', 'language': 'python', 'name': 'python3'}})
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

KERNELSPEC = {"display_name": "Python 3", "language": "python", "name": "python3"}
HOOK = "evalkit.publish.jupyter_hooks.clean_committed_notebook"
# where the hook lived before the package had pipeline folders: an environment set up then is updated, not refused
HOOK_BEFORE_THE_FOLDERS = "evalkit.jupyter_hooks.clean_committed_notebook"
KEPT_METADATA = ("jupytext",)


def committed_folder() -> Path:
    """The folder of the committed notebooks (the installed package's ``notebooks/``)."""
    return (Path(__file__).parents[1] / "notebooks").resolve()


def clean_notebook_content(nb: dict[str, Any]) -> dict[str, Any]:
    """``nb`` (a notebook's JSON content, changed in place and returned) as committed: no outputs, no execution
    counts, metadata reduced to the kernelspec and jupytext's."""
    for cell in nb.get("cells", []):
        if cell.get("cell_type") == "code":
            cell["outputs"] = []
            cell["execution_count"] = None
        for key in ("execution", "collapsed", "scrolled"):
            cell.get("metadata", {}).pop(key, None)
    meta = nb.get("metadata", {})
    kept = {k: meta[k] for k in KEPT_METADATA if k in meta}
    meta.clear()
    meta.update({"kernelspec": dict(KERNELSPEC), **kept})
    return nb


def clean_committed_notebook(model: dict[str, Any], path: str = "", contents_manager: Any = None,
                             **kwargs: Any) -> None:
    """Jupyter's ``pre_save_hook``: a committed evalkit notebook is saved without outputs (see the module)."""
    if model.get("type") != "notebook" or not isinstance(model.get("content"), dict):
        return
    root = getattr(contents_manager, "root_dir", None)
    if root is None:
        return
    target = (Path(root) / path.lstrip("/")).resolve()
    if target.parent == committed_folder() and target.suffix == ".ipynb":
        clean_notebook_content(model["content"])


def install(prefix: str | Path) -> Path:
    """Merge the hook into ``PREFIX/etc/jupyter/jupyter_server_config.json`` (other settings kept; another
    pre-save hook already there is refused, not replaced)."""
    import json

    from evalkit.base.safeio import write_text

    path = Path(prefix) / "etc" / "jupyter" / "jupyter_server_config.json"
    config = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    theirs = config.get("ContentsManager", {}).get("pre_save_hook")
    if theirs not in (None, HOOK, HOOK_BEFORE_THE_FOLDERS):  # Jupyter takes one hook: never replace somebody else's silently
        raise SystemExit(f"{path} already sets ContentsManager.pre_save_hook = {theirs!r}; call "
                         f"{HOOK} from that hook (or remove it) to keep evalkit's notebooks clean on save")
    config.setdefault("ContentsManager", {})["pre_save_hook"] = HOOK
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text(path, json.dumps(config, indent=2, sort_keys=True) + "\n")
    return path


if __name__ == "__main__":
    import sys

    if sys.argv[1:] != ["--install"]:
        raise SystemExit("usage: python -m evalkit.publish.jupyter_hooks --install")
    print(f"evalkit: committed notebooks are saved without outputs ({install(sys.prefix)})")
