"""Guest kernels: the image to boot, which policy it runs and what it was built from.

`--policy P` asks runners/lab/build-kernel.sh for Debian's 6.12 with P's patch (it prints the
bzImage's path and leaves meta.json beside it; a cached image costs nothing). `--kernel IMAGE` boots
an image; a meta.json beside it says its policy. Without either, the newest /boot/vmlinuz-* or the
Debian image runners/lab/fetch-kernel.sh cached, held to the mainline model."""
import glob
import os
import re
import subprocess
from pathlib import Path

from . import CHECKOUT, HERE, INSTALLED_WAKEBENCH, REPO, LabError, inputs
from .initramfs import elf_arch
from .registry import ARCHITECTURES, KERNELS, host_arch

# The policies build-kernel.sh builds (current-cpu needs no patch: 6.12's select_task_rq_fair
# already returns the waker's CPU for WF_CURRENT_CPU, which futex-swap's seccomp handoff carries, so
# the mainline image runs it), from registry/registry.json.
KERNEL_POLICIES = tuple(KERNELS)
BUILD_SCRIPT = HERE / "build-kernel.sh"
# build-kernel.sh --gated: every patched policy behind its sched feature, all off at boot, so the
# guest runs 6.12's rules and is held to this model (another policy's needs its feature on).
GATED, GATED_MODEL = "gated", "mainline"
# Your patch or your tree (build-kernel.sh --patch FILE / --kernel-tree DIR, KERNELS.md): images
# whose meta.json says policy "patch" or "tree". No model knows them: the guest is held to
# mainline's, so what mainline's model does not reproduce is what the patch changed. A matrix
# names them patch:FILE / tree:DIR in --kernels, its column patch:<name> / tree:<name>.
USER_KINDS = {"patch": "--patch", "tree": "--kernel-tree"}
MAINLINE = GATED_MODEL


def is_user(column):
    """Whether a matrix column is a user kernel's (patch:<name>, tree:<name>)."""
    return column.partition(":")[0] in USER_KINDS

def version_key(path):
    return [int(x) if x.isdigit() else x for x in re.split(r"(\d+)", os.path.basename(path))]


def cache_dir():
    return Path(os.environ.get("WB_LAB_CACHE") or
                Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "wakebench-lab")


def find_kernel(arg, what="--kernel "):
    if arg:
        p = Path(arg)
        if not p.is_file() or not os.access(p, os.R_OK):
            raise LabError(f"{what}{arg}: not a readable file")
        return p
    env = os.environ.get("WB_LAB_KERNEL")
    if env:
        return find_kernel(env, "WB_LAB_KERNEL=")
    for pattern in ("/boot/vmlinuz-*", str(cache_dir() / "kernel/boot/vmlinuz-*")):
        found = [p for p in sorted(glob.glob(pattern), key=version_key) if os.access(p, os.R_OK)]
        if found:
            return Path(found[-1])
    raise LabError("no kernel: none readable in /boot and none in the lab cache; run "
                   "runners/lab/fetch-kernel.sh (Debian's linux-image-amd64) or pass --kernel PATH")


def find_wakebench(arg):
    """--wakebench, else $WB_BINARY, else the build directory runners/bootstrap.sh and the README
    use ($WB_BUILD_DIR, default build/ in this checkout), else an installed lab's P/bin."""
    build = Path(os.environ.get("WB_BUILD_DIR") or REPO / "build")
    if not build.is_absolute():
        build = Path.cwd() / build
    if arg:
        cands = [("--wakebench", arg)]
    elif os.environ.get("WB_BINARY"):
        cands = [("$WB_BINARY", os.environ["WB_BINARY"])]
    elif CHECKOUT or os.environ.get("WB_BUILD_DIR"):
        cands = [("the build directory", build / "wakebench")]
    else:
        cands = [("the installed wakebench", INSTALLED_WAKEBENCH)]
    for what, c in cands:
        if Path(c).is_file() and os.access(c, os.X_OK):
            return Path(c).resolve()
    what, c = cands[0]
    raise LabError(f"wakebench binary not found at {c} ({what}); build it (cmake -S . -B build "
                   "&& cmake --build build --target wakebench) or pass --wakebench PATH")




def find_guest_wakebench(arg, arch, host_wakebench):
    """The wakebench a guest of `arch` runs: the host's for a guest of the host's architecture
    (unless --guest-wakebench names another), else --guest-wakebench or the build directory of
    runners/cross-build.sh (build-cross-<uname -m>)."""
    if not arg and host_arch() == arch:
        return host_wakebench
    machine = ARCHITECTURES[arch]["uname"]
    path = Path(arg) if arg else REPO / f"build-cross-{machine}" / "wakebench"
    if not path.is_file():
        raise LabError(f"no {arch} wakebench at {path}: runners/cross-build.sh {machine} builds "
                       "it (or pass --guest-wakebench PATH)")
    if elf_arch(path) != arch:
        raise LabError(f"{path} is not an {arch} binary")
    return path.resolve()


def build_kernel(policy, lockdep=False, arch="x86_64", script=BUILD_SCRIPT):
    """The image of `policy` for `arch` from build-kernel.sh (which builds it unless cached)."""
    return run_build_script(["--policy", policy, "--arch", arch] +
                            (["--lockdep"] if lockdep else []), script)


def build_user_kernel(kind, path, arch="x86_64", script=BUILD_SCRIPT):
    """The image of your patch (kind "patch") or tree ("tree") for `arch`, from build-kernel.sh."""
    return run_build_script([USER_KINDS[kind], str(path), "--arch", arch], script)


def user_kernel(spec):
    """--kernels' 'patch:FILE' / 'tree:DIR' -> (its column, kind, absolute path); None for a
    policy's name; LabError when the file or directory is not there."""
    kind, sep, path = spec.partition(":")
    if not sep or kind not in USER_KINDS:
        return None
    p = Path(path).expanduser().resolve()
    if not (p.is_file() if kind == "patch" else p.is_dir()):
        raise LabError(f"--kernels {spec}: {path} is not a "
                       f"{'file' if kind == 'patch' else 'directory'}")
    name = p.name.removesuffix(".patch").removesuffix(".diff") if kind == "patch" else p.name
    return f"{kind}:{name}", kind, p


def resolve_user(column, kind, path, arch="x86_64", build=build_user_kernel):
    """(image, mainline, environment.lab_kernel) of the user kernel a matrix names `column`: its
    lab_kernel's policy is the column (as a gated guest's is "gated"), `model` mainline."""
    image, policy, info = resolve_kernel(str(build(kind, path, arch)), None, arch=arch)
    if info.get("kernel") != kind:
        raise LabError(f"{image}: its meta.json is not a {kind} kernel's")
    return image, policy, dict(info, policy=column, model=policy)


def run_build_script(args, script=BUILD_SCRIPT):
    """build-kernel.sh ARGS: the image path it prints last (its progress goes to stderr)."""
    if not Path(script).is_file():
        raise LabError(f"{script} not found: {args[0]} needs the kernel build script "
                       "(or boot an image with --kernel)")
    cmd = [str(script)] + args
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        raise LabError(f"{' '.join(cmd)} exited {proc.returncode} (its stderr above)")
    image = Path(lines[-1])
    if not image.is_file():
        raise LabError(f"{' '.join(cmd)} printed {image}, which is not a file")
    return image


def read_meta(image):
    """meta.json beside `image` (build-kernel.sh writes it), or None. A meta.json that is not a
    JSON object naming a policy is an error."""
    path = Path(image).parent / "meta.json"
    if not path.is_file():
        return None
    meta = inputs.load_json(path, "kernel's meta.json")
    if not isinstance(meta, dict) or not isinstance(meta.get("policy"), str):
        raise LabError(f"{path}: not an object with a \"policy\" string")
    return meta


def model_policy(meta_policy):
    """The policy whose model an image built as `meta_policy` is held to: its own, or for the
    gated kernel (all its features off at boot) mainline's."""
    return GATED_MODEL if meta_policy == GATED or meta_policy in USER_KINDS else meta_policy


def resolve_kernel(kernel_arg, policy_arg, lockdep=False, build=build_kernel, arch="x86_64"):
    """(image, the policy whose model the guest is held to, environment.lab_kernel).

    --policy alone builds (or finds) that policy's image for `arch`. --kernel with a meta.json uses
    its policy (a different --policy is an error); without one --policy names the model (default
    mainline). A meta.json naming another architecture than the guest's is an error."""
    if kernel_arg:
        image = find_kernel(kernel_arg)
        meta = read_meta(image)
        runs = model_policy(meta["policy"]) if meta else None
        # A gated image named as gated (the matrix's --image gated=...) stays gated.
        if meta and policy_arg and policy_arg not in (runs, meta["policy"]):
            raise LabError(f"--kernel {kernel_arg} runs policy {runs} (its meta.json), "
                           f"not --policy {policy_arg}")
        policy = (policy_arg if policy_arg == meta["policy"] else runs) if meta else \
            (policy_arg or "mainline")
    elif policy_arg:
        image = build(policy_arg, lockdep, arch)
        meta = read_meta(image)
        if meta and meta["policy"] != policy_arg:
            raise LabError(f"{image}: meta.json says policy {meta['policy']}, not {policy_arg}")
        policy = policy_arg
    else:
        image, meta, policy = find_kernel(None), None, "mainline"
    built_for = meta.get("arch", "x86_64") if meta else None
    if built_for and built_for != arch:
        raise LabError(f"{image} is an {built_for} kernel (its meta.json), the guest is {arch}")
    info = {"image": str(image), "policy": policy}
    if not meta:
        info["note"] = "no meta.json beside the image: the policy is --policy's (default mainline)"
    elif meta["policy"] == GATED:
        info.update(kernel=GATED, features=meta.get("features"),
                    note=f"gated kernel, every sched feature off at boot: {GATED_MODEL}'s model")
    elif meta["policy"] in USER_KINDS:
        info.update(kernel=meta["policy"], note=f"your {meta['policy']}, which no model knows: "
                    f"{GATED_MODEL}'s model (what it does not reproduce, the patch changed)")
    for k in ("arch", "source_version", "source_package", "patch_sha256", "config_sha256",
              "lockdep", "build_seconds", "patch_file", "tree", "tree_sha256", "event_sha256"):
        if meta and k in meta:
            info[k] = meta[k]
    return image, policy, info
