#!/usr/bin/env bash
# The system tools the test suite drives for real, named once: headless Chromium (the report and notebook pages),
# pdflatex (LaTeX tables and the paper bundle), pdftoppm (the paper's rendered pages). No test is skipped for a
# missing tool, so `make test` checks for them before it starts (a missing one would fail a dozen tests minutes in,
# each with its own traceback) and `.ci/run` installs what is missing with `--install`.
#   bash tools/system_tools.sh            # exit 2 and say what to install when a tool is missing
#   bash tools/system_tools.sh --install  # apt-get install what is missing (as root, e.g. in CI)
set -euo pipefail
missing=()
command -v chromium >/dev/null || missing+=(chromium)
command -v pdflatex >/dev/null || missing+=(texlive-latex-base texlive-latex-recommended)
command -v pdftoppm >/dev/null || missing+=(poppler-utils)
[ "${#missing[@]}" -eq 0 ] && exit 0
if [ "${1:-}" = "--install" ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  exit 0
fi
echo "make test: the suite drives these system tools and none may be missing: ${missing[*]}" >&2
echo "  install them with: sudo apt-get install --no-install-recommends ${missing[*]}" >&2
echo "  (or run bash .ci/run, which installs them and then runs make test)" >&2
exit 2
