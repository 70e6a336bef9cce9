#!/usr/bin/env bash
# The build installs like any CMake project:
#   tests/install_check.sh BUILD_DIR
# installs BUILD_DIR into a temporary prefix (cmake --install), runs the installed wakebench on
# one case of the quick suite (configs from the prefix), and the installed lab runner's --help,
# which must name its kernel patches, suites and registry under the prefix. Nothing outside the
# prefix is read from the checkout: the commands run from an empty directory.
set -euo pipefail
build=$(cd "$1" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
cmake --install "$build" --prefix "$prefix" >/dev/null
share=$prefix/share/wakebench
mkdir "$tmp/cwd" && cd "$tmp/cwd"
"$prefix/bin/wakebench" run --config "$share/configs/quick.json" \
  --benchmark_filter='^pipe/threads/same-cpu$' --out r.json >/dev/null 2>err.txt ||
  { cat err.txt >&2; exit 1; }
python3 -c 'import json, sys
rs = json.load(open("r.json"))
sys.exit(not (rs["complete"] and [c["status"] for c in rs["cases"]] == ["ok"]))' ||
  { echo "install: the installed wakebench did not run its one case" >&2; exit 1; }
help=$("$prefix/bin/wakebench-lab" --help)
for want in "kernel patches $share/runners/lab/patches (4," "suites $share/configs/lab" \
  "registry $share/registry/registry.json"; do
  # argparse wraps the epilog: compare with the line breaks removed.
  if ! tr '\n' ' ' <<<"$help" | tr -s ' ' | grep -qF "$want"; then
    echo "install: the installed wakebench-lab --help does not say '$want'" >&2
    exit 1
  fi
done
echo "install: $prefix holds wakebench (ran pipe/threads/same-cpu) and the lab runner"
