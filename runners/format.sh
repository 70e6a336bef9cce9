#!/usr/bin/env bash
# clang-format over every C++ file git tracks (not tests/fixtures, not the kernel patches under
# runners/lab/patches) against the repository's .clang-format:
#   runners/format.sh          check: lists each violation, exits 1 if there is one
#   runners/format.sh --fix    rewrites the files in place
# Pinned to Debian 12's clang-format 14 (installed when missing): another major version formats
# some constructs differently, so a check would fail on files that 14 accepts.
set -euo pipefail
cd "$(dirname "$0")/.."
. runners/install-packages.sh
install_packages format clang-format-14
version=$(clang-format-14 --version)
case "$version" in
  *" version 14."*) ;;
  *)
    echo "format: expected clang-format 14, found: $version" >&2
    exit 2
    ;;
esac
mode=(--dry-run --Werror)
[ "${1:-}" = --fix ] && mode=(-i)
git ls-files -z -- '*.cpp' '*.h' ':!tests/fixtures' ':!runners/lab/patches' ':!runners/lab/trace' |
  xargs -0 clang-format-14 "${mode[@]}" || {
  echo "format: clang-format-14 violations above (runners/format.sh --fix rewrites them)" >&2
  exit 1
}
