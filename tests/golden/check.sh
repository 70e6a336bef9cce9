#!/usr/bin/env bash
# Golden outputs: what wakebench prints and writes for committed fixtures, byte for byte.
#   tests/golden/check.sh WAKEBENCH            exit 1 and a diff when any output changed
#   tests/golden/check.sh WAKEBENCH --update   rewrite the files under tests/golden/out/
# Covered: predict --results (text and JSON) on two result sets, compare in its five formats (and
# the mail table of two runs a side), report's data files, tables and scripts (not its images).
# run's summary table has its golden file too (tests/golden/summary.txt), checked by
# tests/summary_test.cpp (WB_GOLDEN_UPDATE=1 rewrites it). A structural change must leave all of
# them alone; a change of output updates them in the same commit, and the diff shows what changed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
wb=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
update=${2:-}
fx=$repo/tests/fixtures
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
mkdir out
# The predict fixtures leave topology.xml empty (tests/fixtures/predict/README.md): filled here.
fill() {
  python3 -c 'import json, sys
rs = json.load(open(sys.argv[1]))
rs["topology"]["xml"] = open(sys.argv[2]).read()
json.dump(rs, open(sys.argv[3], "w"))' "$@"
}
fill "$fx/predict/results-2cpu.json" "$fx/predict/kvm-epyc-2vcpu-nosmt.xml" results-2cpu.json
fill "$fx/predict/results-box-c.json" "$fx/topologies/model/box-c-8c-smt2-stride8-1llc.xml" \
  results-box-c.json
for r in results-2cpu results-box-c; do
  "$wb" predict --results $r.json >out/predict-$r.txt 2>&1
  "$wb" predict --results $r.json --json >out/predict-$r.json
done
cp "$fx/results/base.json" "$fx/results/new.json" .
for f in text markdown csv json mail; do
  "$wb" compare base.json new.json --format $f >out/compare.$f 2>&1
done
# The mail table of the run-level form: two runs a side (tests/fixtures/results/runs).
cp "$fx"/results/runs/*.json .
"$wb" compare base-run1.json base-run2.json -- new-run1.json new-run2.json --format mail \
  >out/compare-runs.mail 2>&1
cp "$fx/results/report-sample.json" .
"$wb" report report-sample.json --out report >/dev/null
mkdir out/report
for f in report/*; do
  case $f in *.png | *.svg) ;; *) cp "$f" out/report/ ;; esac
done
if [ "$update" = --update ]; then
  rm -rf "$here/out"
  cp -r out "$here/out"
  echo "golden: wrote $(find out -type f | wc -l) files to $here/out"
  exit 0
fi
if ! diff -r -u "$here/out" out; then
  echo "golden: the outputs above differ from tests/golden/out (--update if intended)" >&2
  exit 1
fi
echo "golden: $(find out -type f | wc -l) outputs identical"
