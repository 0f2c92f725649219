"""Regenerate the README's screenshots: the default report (top of page) and the evidence view of a failing row.

    python benchmarks/screenshots.py [--report reports/default/report.html] [--row q19 --system rag-b]

Without ``--report`` it runs ``evalkit report experiments/default.yaml`` into a scratch folder first (a few
minutes). Both pages are measured with the browser test's checker before the picture is taken, so a
screenshot of a page that scrolls sideways or lost an image is refused with the measurements. Writes
``figures/report.png`` and ``figures/evidence.png`` (1280 px wide, headless Chromium).
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the checker lives in tests/test_browser.py, beside the test that uses it

from tests.test_browser import check_page, screenshot  # noqa: E402

from evalkit.base.data import read_table  # noqa: E402
from evalkit.publish.view.show import show  # noqa: E402


def default_report(scratch: Path) -> Path:
    """``evalkit report experiments/default.yaml`` run from a scratch folder (no figures/ copy in the repo)."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "MPLBACKEND": "Agg"}
    subprocess.run([sys.executable, "-m", "evalkit.cli", "report", str(ROOT / "experiments" / "default.yaml"),
                    "--out", str(scratch)], cwd=scratch, env=env, check=True)
    return scratch / "default" / "report.html"


def evidence_page(results_path: Path, row: str, system: str | None, out: Path) -> Path:
    """The evidence view of one row of a report's saved results, as a standalone page."""
    results = read_table(results_path)
    out.write_text(show(results, row, system=system).to_page(), encoding="utf-8")
    return out


def checked_screenshot(page: Path, png: Path, height: int) -> None:
    m = check_page(page)
    if m["overflow"] or m["scrolling_boxes"] or m["broken_images"]:
        raise SystemExit(f"{page} does not fit 1280 px or lost an image; not taking its picture: "
                         f"scrollWidth {m['scrollWidth']} (viewport {m['clientWidth']}), overflowing "
                         f"{m['overflowing'][:3]}, scrolling boxes {m['scrolling_boxes'][:3]}, "
                         f"broken images {m['broken_images']}")
    screenshot(page, png, height=height)
    print(f"{png.relative_to(ROOT)}: {page} at 1280 x {height}")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--report", type=Path, help="an existing report.html (default: make the default report)")
    ap.add_argument("--row", default="q19", help="id of the failing row to show (default: q19)")
    ap.add_argument("--system", default="rag-b", help="its system, since ids repeat across systems")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="ek-shots-") as tmp:
        report = args.report.resolve() if args.report else default_report(Path(tmp))
        checked_screenshot(report, ROOT / "figures" / "report.png", height=900)
        page = evidence_page(report.parent / "results.parquet", args.row, args.system, Path(tmp) / "evidence.html")
        checked_screenshot(page, ROOT / "figures" / "evidence.png", height=1000)


if __name__ == "__main__":
    main()
