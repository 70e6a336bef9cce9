"""The A/A benchmark of `wakebench compare` (README.md#aa-benchmark-of-compare), one command:

    python3 -m runners.aabench [--pairs 5] [--calibration-pairs 1] [--config configs/quick.json]
                               [--out results/aa-<UTC time>] [--reuse] [-- RUN ARGS...]

1. Calibration: --calibration-pairs A/A pairs of `wakebench run`; `wakebench noise` over all their
   sets writes the machine's A/A noise floor.
2. A/A: --pairs more pairs, each two back-to-back runs of the same suite; `wakebench compare` counts
   the cases it stars, without and with the noise floor (goal: <= 1 starred in >= 4 of 5 pairs).
3. Power: the second set of each pair with every round-trip time scaled by 1.05 and 1.10 (a
   synthetic regression with the run's real noise); the share of cases starred as slower, with the
   floor (goal: >= 90 % at 1.10).
Prints a table per pair and the summary; exit status 0 when both goals are met, 1 when not.
"""

import argparse
import datetime
import json
import os
import socket
import subprocess
import sys
import time

from runners.aabench.core import count_stars, scale_rtt, verdict

FACTORS = (1.05, 1.10)


def wakebench_binary(root):
    build = os.environ.get("WB_BUILD_DIR", os.path.join(root, "build"))
    return os.path.join(build, "wakebench")


def run(cmd, **kw):
    print("+ " + " ".join(cmd), file=sys.stderr, flush=True)
    return subprocess.run(cmd, check=True, **kw)


def measure(binary, config, path, run_args, reuse):
    """One `wakebench run` into `path`; its progress and summary go to path's .log."""
    if reuse and os.path.exists(path):
        return
    start = time.monotonic()
    with open(os.path.splitext(path)[0] + ".log", "w") as log:
        subprocess.run([binary, "run", "--config", config, "--out", path] + run_args, check=True,
                       stdout=subprocess.DEVNULL, stderr=log)
    print(f"ran {path} ({time.monotonic() - start:.0f} s)", file=sys.stderr, flush=True)


def compare(binary, a, b, noise=None):
    cmd = [binary, "compare", a, b, "--format", "json"]
    if noise:
        cmd += ["--noise", noise]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def main(argv=None):
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap = argparse.ArgumentParser(prog="python3 -m runners.aabench", description=__doc__.split("\n")[0])
    ap.add_argument("--pairs", type=int, default=5, help="A/A pairs tested (default 5)")
    ap.add_argument("--calibration-pairs", type=int, default=1,
                    help="A/A pairs that measure the noise floor first (default 1)")
    ap.add_argument("--config", default=os.path.join(root, "configs", "quick.json"))
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    ap.add_argument("--out", default=os.path.join("results", "aa-" + stamp),
                    help="folder for the result sets, the noise file and summary.txt")
    ap.add_argument("--reuse", action="store_true",
                    help="keep result sets already in --out (re-analyse without re-running)")
    ap.add_argument("run_args", nargs="*", help="after --: extra arguments to wakebench run")
    args = ap.parse_args(argv)
    if args.pairs < 1 or args.calibration_pairs < 1:
        ap.error("--pairs and --calibration-pairs must be >= 1")
    binary = wakebench_binary(root)
    os.makedirs(args.out, exist_ok=True)

    def pair_paths(kind, i):
        return [os.path.join(args.out, f"{kind}{i}-{side}.json") for side in "ab"]

    calibration = []
    for i in range(args.calibration_pairs):
        for p in pair_paths("cal", i):
            measure(binary, args.config, p, args.run_args, args.reuse)
            calibration.append(p)
    noise = os.path.join(args.out, "noise.json")
    run([binary, "noise"] + calibration + ["--out", noise], stdout=subprocess.DEVNULL)

    pairs = []
    for i in range(args.pairs):
        a, b = pair_paths("aa", i)
        measure(binary, args.config, a, args.run_args, args.reuse)
        measure(binary, args.config, b, args.run_args, args.reuse)
        result = {"aa": count_stars(compare(binary, a, b)),
                  "aa_floor": count_stars(compare(binary, a, b, noise)), "power": {}}
        with open(b) as f:
            doc = json.load(f)
        for factor in FACTORS:
            scaled = os.path.join(args.out, f"aa{i}-b-x{factor:.2f}.json")
            with open(scaled, "w") as f:
                json.dump(scale_rtt(doc, factor), f)
            result["power"][factor] = count_stars(compare(binary, a, scaled, noise), want_sign=-1)
        pairs.append(result)

    lines, met = verdict(pairs)
    header = [f"A/A benchmark of wakebench compare (median RTT): {args.pairs} pairs of "
              f"`wakebench run --config {os.path.relpath(args.config, root)}"
              + (" " + " ".join(args.run_args) if args.run_args else "") + "`",
              f"machine {socket.gethostname()} ({os.cpu_count()} CPUs), "
              f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC; noise floor "
              f"from {len(calibration)} calibration runs ({noise})", ""]
    text = "\n".join(header + lines) + "\n"
    with open(os.path.join(args.out, "summary.txt"), "w") as f:
        f.write(text)
    print(text, end="")
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
