# mmtests' driver for wakebench (sourced by bin/run-single-test.sh as drivers/driver-wakebench.sh,
# a link to integrations/mmtests/driver-wakebench.sh of a wakebench checkout). The config sets
# WAKEBENCH_CONFIG and, optionally:
#   WAKEBENCH_SOURCE    the wakebench checkout to build (default: the one this file lives in)
#   WAKEBENCH_BINARY    a built or installed wakebench to run as it is instead of building one
#                       (default, when this file lives in an installed P/share/wakebench:
#                       P/bin/wakebench)
#   WAKEBENCH_RUN_ARGS  more arguments for `wakebench run`, e.g. --benchmark_filter=pipe
# The version, which names the install, is the checkout's commit (with a hash of its uncommitted
# changes when it has some), so a changed checkout builds anew; for a binary, a hash of its path.

wakebench_version() {
	if [ -n "$WAKEBENCH_BINARY" ]; then
		echo "bin-$(realpath "$WAKEBENCH_BINARY" | md5sum | cut -c1-8)"
		return
	fi
	local head
	head=$(git -C "$WAKEBENCH_SOURCE" rev-parse --short=12 HEAD) || return 1
	if [ -z "$(git -C "$WAKEBENCH_SOURCE" status --porcelain --untracked-files=no)" ]; then
		echo "$head"
	else
		echo "$head-dirty-$(git -C "$WAKEBENCH_SOURCE" diff HEAD | md5sum | cut -c1-8)"
	fi
}

run_bench() {
	# This file is integrations/mmtests of a wakebench checkout, or of an installed
	# P/share/wakebench, whose P/bin/wakebench is then the binary.
	local tree
	tree=$(realpath "$(dirname "$(realpath "${BASH_SOURCE[0]}")")/../..")
	export WAKEBENCH_SOURCE=${WAKEBENCH_SOURCE:-$tree}
	if [ -z "$WAKEBENCH_BINARY" ] && [ ! -e "$WAKEBENCH_SOURCE/CMakeLists.txt" ] &&
		[ -x "$tree/../../bin/wakebench" ]; then
		WAKEBENCH_BINARY=$tree/../../bin/wakebench
	fi
	export WAKEBENCH_BINARY
	local version
	version=$(wakebench_version) || die "WAKEBENCH_SOURCE=$WAKEBENCH_SOURCE is not a git checkout"
	$SCRIPTDIR/shellpacks/shellpack-bench-wakebench -v "$version" \
		--config "${WAKEBENCH_CONFIG:-quick}" \
		${WAKEBENCH_RUN_ARGS:+--run-args "$WAKEBENCH_RUN_ARGS"}
	return $?
}
