#!/usr/bin/env bash
# The build installs like any CMake project:
#   tests/install_check.sh BUILD_DIR
# installs BUILD_DIR into a temporary prefix (cmake --install), runs the installed wakebench on
# one case of the quick suite twice, the config given by its installed path and by its name
# (`--config quick`: quick.json of the installed configs), the installed LKP parse on that set, and
# the installed lab runner's --help, which must name its kernel patches, suites and registry under
# the prefix. Nothing outside the prefix is read from the checkout: the commands run from an empty
# directory.
set -euo pipefail
build=$(cd "$1" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
cmake --install "$build" --prefix "$prefix" >/dev/null
share=$prefix/share/wakebench
mkdir "$tmp/cwd" && cd "$tmp/cwd"
# run_one OUT ARGS...: the installed wakebench runs pipe/threads/same-cpu of the config ARGS name
# into OUT, which must record that case ok and the installed quick.json as its config.
run_one() {
  local out=$1
  shift
  "$prefix/bin/wakebench" run "$@" --benchmark_filter='^pipe/threads/same-cpu$' --out "$out" \
    >/dev/null 2>err.txt || { cat err.txt >&2; exit 1; }
  python3 -c 'import json, sys
rs = json.load(open(sys.argv[1]))
sys.exit(not (rs["complete"] and [c["status"] for c in rs["cases"]] == ["ok"]
              and rs["config"]["path"] == sys.argv[2]))' "$out" "$share/configs/quick.json" ||
    { echo "install: the installed wakebench did not run its one case (run $*)" >&2; exit 1; }
}
run_one by-path.json --config "$share/configs/quick.json"
run_one by-name.json --config quick
# The installed LKP parse reads what the installed wakebench wrote (through the installed lab's
# reader: integrations/ finds it beside itself).
cp by-path.json wakebench.output
RESULT_ROOT=$PWD "$share/integrations/lkp/wakebench/parse" </dev/null >stats.txt
grep -q '^pipe/threads/same-cpu\.median_us: [0-9.]*$' stats.txt ||
  { echo "install: the installed LKP parse did not read the installed wakebench's set" >&2; exit 1; }
help=$("$prefix/bin/wakebench-lab" --help)
for want in "kernel patches $share/runners/lab/patches (4," "suites $share/configs/lab" \
  "registry $share/registry/registry.json"; do
  # argparse wraps the epilog: compare with the line breaks removed.
  if ! tr '\n' ' ' <<<"$help" | tr -s ' ' | grep -qF "$want"; then
    echo "install: the installed wakebench-lab --help does not say '$want'" >&2
    exit 1
  fi
done
echo "install: $prefix holds wakebench (ran pipe/threads/same-cpu of quick by path and by name)," \
  "the lab runner and the integrations (LKP's parse read the set)"
