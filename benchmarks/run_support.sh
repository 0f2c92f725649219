#!/usr/bin/env bash
# The support model's whole protocol (issue 24), in order; hours of CPU, so run it in the background:
#   nohup nice -n 5 bash benchmarks/run_support.sh > /tmp/run_support.log 2>&1 &
# 1. base stage (no development file read), scored on every development group;
# 2. dev stage once per fold (FOLDS in eval_support.py: one SummEdits domain, and for folds 0-2 one HaluEval task,
#    left out), each fold's model scored on the groups it never saw;
# 3. the shipped model: the dev stage on every group, into evalkit/resources/support_model/;
# 4. the held-out report (benchmarks/results/support.json) and the model card.
# STAGES (default "base folds ship report"; "base-score" scores an existing base) picks steps; BASE_MINUTES bounds the base stage.
set -euo pipefail
cd "$(dirname "$0")/.."
export HF_HUB_OFFLINE=1
PY=.venv/bin/python
WORK=${WORK:-/tmp/support_work}
STAGES=${STAGES:-base folds ship report}
mkdir -p "$WORK"
has() { [[ " $STAGES " == *" $1 "* ]]; }

if has base; then
  $PY benchmarks/train_support.py --stage base --out "$WORK/base" --threads 2 --time-budget-minutes "${BASE_MINUTES:-110}"
fi
if has base || has base-score; then
  $PY benchmarks/eval_support.py score --model "$WORK/base" --name base
fi
folds=$($PY -c 'import sys; sys.path.insert(0, "benchmarks"); from eval_support import FOLDS; print(len(FOLDS))')
if has folds; then
  for k in $(seq 0 $((folds - 1))); do
    groups=$($PY -c "import sys; sys.path.insert(0, 'benchmarks'); from eval_support import FOLDS; print(' '.join(FOLDS[$k]))")
    $PY benchmarks/train_support.py --stage dev --init "$WORK/base" --holdout "${groups// /,}" --out "$WORK/fold$k" \
      --lr 2e-5 --warmup-steps 20 --threads 2
    $PY benchmarks/eval_support.py score --model "$WORK/fold$k" --groups $groups --name "fold$k"
  done
fi
if has ship; then
  $PY benchmarks/train_support.py --stage dev --init "$WORK/base" --holdout none --lr 2e-5 --warmup-steps 20 \
    --threads 2 --out evalkit/resources/support_model
fi
if has report; then
  runs=$(seq -f "fold%g" 0 $((folds - 1)) | tr '\n' ' ')
  $PY benchmarks/eval_support.py report --runs $runs --out benchmarks/results/support.json
  $PY benchmarks/eval_support.py report --runs base --out benchmarks/results/support_base.json
  $PY benchmarks/train_support.py --card --dev benchmarks/results/support.json
fi
