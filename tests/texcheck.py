"""Compile LaTeX the way a paper would: pdflatex in a temporary folder, failing the test on any LaTeX error.

The tools come from Debian's texlive-latex-base, texlive-latex-recommended and poppler-utils (``.ci/run``
installs them); without them the test fails and says what to install.
"""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

PREAMBLE = "\\documentclass{article}\n\\usepackage{booktabs}\n\\begin{document}\n"
INSTALL = "apt-get install texlive-latex-base texlive-latex-recommended poppler-utils"


def need(tool: str) -> str:
    path = shutil.which(tool)
    if path is None:
        pytest.fail(f"{tool} is not installed: {INSTALL}")
    return path


def compile_tex(folder: Path, name: str = "main.tex", runs: int = 1) -> Path:
    """Run pdflatex on ``folder/name`` (nonstopmode, halt on error); fail with the log's error lines."""
    pdflatex = need("pdflatex")
    for _ in range(runs):
        p = subprocess.run([pdflatex, "-interaction=nonstopmode", "-halt-on-error", name], cwd=folder,
                           capture_output=True, text=True, timeout=300)
        log = (folder / name).with_suffix(".log")
        text = log.read_text(errors="replace") if log.exists() else p.stdout
        errors = [line for line in text.splitlines() if line.startswith("!")]
        if p.returncode != 0 or errors:
            i = text.find("\n!")
            pytest.fail(f"pdflatex failed on {name} (rc {p.returncode}): {errors[:3]}\n{text[max(0, i - 200):i + 800]}")
    return (folder / name).with_suffix(".pdf")


def compile_body(folder: Path, body: str) -> Path:
    """``body`` inside a plain article with booktabs, compiled."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "doc.tex").write_text(PREAMBLE + body + "\n\\end{document}\n", encoding="utf-8")
    return compile_tex(folder, "doc.tex")


def first_page_png(pdf: Path, resolution: int = 60) -> Path:
    """The PDF's first page as a PNG (pdftoppm)."""
    subprocess.run([need("pdftoppm"), "-png", "-r", str(resolution), "-f", "1", "-l", "1", "-singlefile", str(pdf),
                    str(pdf.with_suffix(""))], check=True, timeout=120)
    return pdf.with_suffix(".png")


def ink_share(png: Path) -> float:
    """The share of pixels that are not white (a blank page gives 0)."""
    import numpy as np
    from PIL import Image

    a = np.asarray(Image.open(png).convert("L"))
    return float((a < 250).mean())


def page_fill(pdf: Path, resolution: int = 40) -> list[float]:
    """Each page's filled share: the share of its pixel rows that hold any ink (a page of text is ~0.7-0.9, a
    page holding one small float ~0.2, a blank page 0)."""
    import numpy as np
    from PIL import Image

    prefix = pdf.with_name(pdf.stem + "-page")
    subprocess.run([need("pdftoppm"), "-png", "-r", str(resolution), str(pdf), str(prefix)], check=True, timeout=300)
    pages = sorted(pdf.parent.glob(prefix.name + "-*.png"), key=lambda p: int(p.stem.rsplit("-", 1)[1]))
    return [float((np.asarray(Image.open(p).convert("L")) < 250).any(axis=1).mean()) for p in pages]
