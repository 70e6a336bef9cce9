"""wakebench topology lab: wakebench inside qemu guests whose topology has what the host lacks (SMT
siblings, several LLCs, several NUMA nodes), held against the policy model of the kernel the guest
runs. Modules: qemu (presets, the requested topology, its qemu arguments), qemurun (running the
guest, the transfer port), initramfs, sysfs (the guest's view), kernel (images and their build
metadata), inputs (the input rules of every file and argument: one line, exit status 2), resultset
(the one reader of a result set), predictions (the one reader of its predictions, of predict.json
and of a case's wakeup trace), agreement (placements vs a policy's model), matrix (presets x
kernels: matrix_collect reads the guests, matrix_runs has two kernels' alternated runs judged by
`wakebench compare`, matrix_judge judges them into matrix_cells' typed records, matrix_render and
matrix_document only read them), progress (the lines with the ETA), cli. Python standard library
only."""
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent  # runners/lab
# A checkout, or P/share/wakebench of an installed one (cmake --install: the same layout, with
# wakebench in P/bin). An installed lab writes its results under the current directory.
REPO = HERE.parent.parent
CHECKOUT = (REPO / ".git").exists()
RESULTS = (REPO if CHECKOUT else Path.cwd()) / "results"
INSTALLED_WAKEBENCH = REPO.parent.parent / "bin" / "wakebench"
BANNER = "EMULATED (TCG) timings: not comparable with any host measurement"


class LabError(Exception):
    """A one-line problem the runner reports (exit status 2)."""


def log(msg):
    print(f"wakebench-lab: {msg}", file=sys.stderr, flush=True)


def write_atomic(path, data):
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_bytes(data if isinstance(data, bytes) else data.encode())
    os.replace(tmp, path)
