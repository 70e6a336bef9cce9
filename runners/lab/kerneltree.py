"""The kernel source the lab builds from, for kernelbuild.py (the images) and kernelcompare.py
(the checks that compile and compare): Debian's linux-source-6.12 extracted once per version,
kernel/sched restored from its pristine copy and patched exactly (no offset, no fuzz), the policy
patches, the gated series and the decision-event patches checked (--check-patches) or regenerated
(--write-trace-patches), config fragments read and checked, make run niced for the guest's
architecture (runners/lab/KERNELS.md).
"""
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

# The policies with their patch (POLICIES; None: the unpatched source), from
# registry/registry.json.
from wblab import tracepatch
from wblab.registry import ARCHITECTURES as ARCHES, FEATURES, KERNELS as POLICIES, host_arch

HERE = Path(__file__).resolve().parent
PATCHES = HERE / "patches"
PACKAGE = "linux-source-6.12"
TARBALL = Path("/usr/src/linux-source-6.12.tar.xz")
TOP = "linux-source-6.12"
# Patches may only touch files below these directories: they are what gets restored. The
# arch/powerpc ones are the POWER device-tree shim's (ARCH_PATCHES).
PATCHABLE = ["kernel/sched", "arch/powerpc/kernel", "arch/powerpc/platforms/pseries"]
# The gated kernel: patches/gated/*.patch in name order, each policy behind its sched feature
# (FEATURES), all off by default (mainline 6.12).
GATED = "gated"
SERIES = PATCHES / GATED
# The decision event (wblab/tracepatch.py): patches/trace/<series>.patch, applied after the
# series' policy patches in every lab kernel.
TRACE = PATCHES / "trace"
# Lab-only patches of one guest architecture, applied after the series' own in every kernel of
# that architecture (part of its patch sha; other architectures' kernels are unchanged): the
# POWER device-tree shim, off unless the command line names it (runners/lab/power/DOMAINS.md,
# section 6; wblab/qemu.py shim_cmdline).
ARCH_PATCHES = {"ppc64le": [PATCHES / "shim" / "powervm-lpar.patch"]}


class BuildError(Exception):
    """Bad input or a missing prerequisite: exit status 2."""
    status = 2


class BuildFailed(BuildError):
    """The kernel build itself failed: exit status 1."""
    status = 1


def log(msg):
    print(f"build-kernel: {msg}", file=sys.stderr, flush=True)


# ----------------------------------------------------------------------------------------------
# Pure helpers (runners/lab/tests/test_kernelbuild.py)

def series_files(directory):
    """The gated series: every *.patch in `directory`, in name order (0001-..., 0002-...)."""
    files = sorted(Path(directory).glob("*.patch"))
    if not files:
        raise BuildError(f"{directory}: no *.patch (the gated series)")
    return files


def policy_patches(policy, series_dir=None):
    """A series' policy patches, in order: none, its policy's, or the gated series."""
    if policy == GATED:
        return series_files(series_dir or SERIES)
    return [PATCHES / POLICIES[policy]] if POLICIES[policy] else []


def kernel_patches(policy, series_dir=None, arch=None):
    """The patches a kernel is built with: its policy patches, then its decision-event patch,
    then `arch`'s own (ARCH_PATCHES)."""
    return policy_patches(policy, series_dir) + [TRACE / f"{policy}.patch"] + \
        ARCH_PATCHES.get(arch, [])


def feature_problems(features_h, fair_c, features):
    """What the patched kernel/sched lacks for `features` ({policy: NAME}): each NAME declared
    off by default in features.h (SCHED_FEAT(NAME, false)) and tested in fair.c."""
    bad = []
    for policy, name in features.items():
        decl = re.findall(rf"^SCHED_FEAT\({name},\s*(\w+)\)", features_h, re.M)
        if decl != ["false"]:
            bad.append(f"{policy}: features.h has {len(decl)} SCHED_FEAT({name}, ...), "
                       f"want one, false ({', '.join(decl) or 'none'})")
        if not re.search(rf"\bsched_feat\({name}\)", fair_c):
            bad.append(f"{policy}: fair.c never tests sched_feat({name})")
    return bad


def upstream_version(debian_version):
    """'6.12.117-1~deb12u1' -> '6.12.117'."""
    m = re.match(r"(\d+\.\d+(?:\.\d+)?)", debian_version)
    if not m:
        raise BuildError(f"cannot read an upstream version from '{debian_version}'")
    return m.group(1)


def makefile_version(text):
    """The version the top-level Makefile declares ('6.12.117')."""
    v = {k: re.search(rf"^{k}\s*=\s*(\d*)", text, re.M) for k in ("VERSION", "PATCHLEVEL",
                                                                  "SUBLEVEL")}
    if not all(v.values()):
        raise BuildError("the source's Makefile has no VERSION/PATCHLEVEL/SUBLEVEL")
    return ".".join(m.group(1) for m in v.values() if m.group(1))


def parse_fragment(text):
    """Config fragment -> {CONFIG_X: value}; '# CONFIG_X is not set' and =n both mean 'n'."""
    opts = {}
    for n, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        m = re.fullmatch(r"# (CONFIG_\w+) is not set", line)
        if m:
            opts[m.group(1)] = "n"
        elif line and not line.startswith("#"):
            m = re.fullmatch(r"(CONFIG_\w+)=(.+)", line)
            if not m:
                raise BuildError(f"config fragment line {n}: not CONFIG_X=value: {line}")
            opts[m.group(1)] = m.group(2)
    return opts


def config_mismatches(wanted, dotconfig):
    """Every option of `wanted` that the final .config does not have as asked (Kconfig drops an
    option silently when a dependency is missing)."""
    have = parse_fragment(dotconfig)
    bad = []
    for k, v in wanted.items():
        got = have.get(k, "n")
        if got != v:
            bad.append(f"{k}={v} asked, .config has {k}={got}" if got != "n"
                       else f"{k}={v} asked, .config has it unset")
    return bad


def patch_header(text):
    """The text before the first 'diff --git': the port's notes, which patch/git apply ignore."""
    i = text.find("\ndiff --git ")
    return text[:i].strip() if i >= 0 else ""


def patched_files(text):
    return re.findall(r"^\+\+\+ b/(\S+)", text, re.M)


def patch_problems(output, returncode):
    """What `patch --dry-run -F0` reported beyond exact application: offsets, fuzz, failures."""
    bad = [line.strip() for line in output.splitlines()
           if re.search(r"offset|fuzz|FAILED|malformed|can't find|Reversed|ignored", line)]
    if returncode and not bad:
        bad.append(f"patch exited {returncode}")
    return bad


def sha256(data):
    return hashlib.sha256(data).hexdigest()


# ----------------------------------------------------------------------------------------------
# Source, patches, make

def cache_dir():
    env = os.environ.get("WB_KERNEL_CACHE")
    if env:
        return Path(env).resolve()
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(xdg).resolve() / "wakebench-lab" / "kernels"


def source_package():
    out = subprocess.run(["dpkg-query", "-W", "-f=${Version}", PACKAGE], capture_output=True,
                         text=True)
    if out.returncode or not out.stdout or not TARBALL.is_file():
        raise BuildError(f"{PACKAGE} is not installed (apt-get install {PACKAGE})")
    return out.stdout


def extract(members, dest):
    """Extracts `members` (paths below the tarball's top directory; all when empty) to dest/TOP."""
    log(f"extracting {TARBALL} {' '.join(members)}")
    cmd = ["tar", "-xJf", str(TARBALL), "-C", str(dest)] + [f"{TOP}/{m}" for m in members]
    subprocess.run(cmd, check=True)
    return Path(dest) / TOP


def ensure_tree(cache, version):
    """<cache>/tree-<version>/{src,pristine}; extracted once, the pristine copy never built in."""
    tree = cache / f"tree-{version}"
    src = tree / "src"
    if (tree / ".extracted").exists():
        add_pristine(tree)
    else:
        shutil.rmtree(tree, ignore_errors=True)
        tree.mkdir(parents=True)
        top = extract([], tree)
        got = makefile_version((top / "Makefile").read_text())
        if got != version:
            raise BuildError(f"{TARBALL} holds {got}, {PACKAGE} says {version}")
        top.rename(src)
        for d in PATCHABLE:
            shutil.copytree(src / d, tree / "pristine" / d)
        (tree / ".extracted").touch()
    return tree


def add_pristine(tree):
    """A tree extracted before PATCHABLE named a directory: that directory's pristine copy,
    from the tarball (never from src, which a build may have patched), restored into src."""
    missing = [d for d in PATCHABLE if not (tree / "pristine" / d).is_dir()]
    if not missing:
        return
    with tempfile.TemporaryDirectory(prefix="wb-kernel-pristine-", dir=tree) as tmp:
        top = extract(missing, tmp)
        for d in missing:
            (tree / "pristine" / d).parent.mkdir(parents=True, exist_ok=True)
            (top / d).rename(tree / "pristine" / d)


def restore_pristine(tree):
    """Puts every patchable file back as extracted. Files whose content changes get a new mtime,
    so make rebuilds exactly what the last patch touched."""
    src, pristine = tree / "src", tree / "pristine"
    for d in PATCHABLE:
        for f in (src / d).rglob("*"):
            if f.is_file() and not (pristine / f.relative_to(src)).exists():
                f.unlink()
        for p in (pristine / d).rglob("*"):
            if p.is_file():
                s = src / p.relative_to(pristine)
                if not s.exists() or s.read_bytes() != p.read_bytes():
                    shutil.copyfile(p, s)


def check_patch(patch, root):
    """Raises unless `patch` applies to `root` with no offset and no fuzz; returns its text."""
    text = patch.read_text()
    if not patch_header(text):
        raise BuildError(f"{patch}: no header before the first 'diff --git' (see KERNELS.md)")
    outside = [f for f in patched_files(text)
               if not any(f.startswith(d + "/") for d in PATCHABLE)]
    if outside:
        raise BuildError(f"{patch}: touches {', '.join(outside)}, outside {PATCHABLE}")
    out = subprocess.run(["patch", "-p1", "-F0", "--dry-run", "-d", str(root), "-i", str(patch)],
                         capture_output=True, text=True)
    bad = patch_problems(out.stdout + out.stderr, out.returncode)
    if bad:
        raise BuildError(f"{patch}: does not apply exactly to {root}: {'; '.join(bad)}")
    return text


def apply_patches(patches, root):
    """Applies `patches` in order to `root`, each checked first to apply exactly to the tree
    the ones before it left; returns their texts."""
    texts = []
    for patch in patches:
        texts.append(check_patch(patch, root))
        subprocess.run(["patch", "-p1", "-F0", "-s", "-d", str(root), "-i", str(patch)],
                       check=True)
    return texts


def check_features(root):
    """Raises unless the patched tree at `root` declares and tests every registry feature."""
    sched = Path(root) / "kernel/sched"
    bad = feature_problems((sched / "features.h").read_text(), (sched / "fair.c").read_text(),
                           FEATURES)
    if bad:
        raise BuildError("the gated series lacks features: " + "; ".join(bad))


def check_series(version, tmp):
    """The gated series, in order, on its own fresh extraction of kernel/sched."""
    root = extract(PATCHABLE, Path(tmp) / GATED)
    for patch, text in zip(series_files(SERIES), apply_patches(series_files(SERIES), root)):
        hunks = len(re.findall(r"^@@ ", text, re.M))
        print(f"{GATED}: {patch.name} applies exactly after the ones before it ({hunks} hunks)")
    check_features(root)
    print(f"{GATED}: the series applies to {version}; its features, each off by default:\n"
          f"  {' '.join(FEATURES.values())}")


def series_roots(tmp):
    """{series: a fresh kernel/sched tree below tmp with that series' policy patches applied},
    from one extraction."""
    (Path(tmp) / "base").mkdir()
    base = extract(PATCHABLE, Path(tmp) / "base")
    roots = {}
    for policy in list(POLICIES) + [GATED]:
        roots[policy] = Path(tmp) / f"series-{policy}"
        shutil.copytree(base, roots[policy])
        apply_patches(policy_patches(policy), roots[policy])
    return roots


def check_trace_patches(tmp):
    """Each series' decision-event patch applies exactly after its policy patches."""
    Path(tmp).mkdir()
    for policy, root in series_roots(tmp).items():
        text = check_patch(TRACE / f"{policy}.patch", root)
        hunks = len(re.findall(r"^@@ ", text, re.M))
        print(f"trace: {policy}.patch applies exactly after {policy}'s patches ({hunks} hunks)")


def check_patches():
    """--check-patches: each patches/<policy>.patch against a fresh extraction of the source,
    the gated series in order against another, then each series' decision-event patch."""
    version = upstream_version(source_package())
    with tempfile.TemporaryDirectory(prefix="wb-kernel-patches-") as tmp:
        root = extract(PATCHABLE, tmp)
        for policy, name in POLICIES.items():
            if name:
                text = check_patch(PATCHES / name, root)
                hunks = len(re.findall(r"^@@ ", text, re.M))
                print(f"{policy}: {name} applies exactly to {version} ({hunks} hunks)")
        (Path(tmp) / GATED).mkdir()
        check_series(version, tmp)
        check_trace_patches(Path(tmp) / "trace")
        for arch, patches in ARCH_PATCHES.items():
            for patch in patches:
                text = check_patch(patch, root)
                hunks = len(re.findall(r"^@@ ", text, re.M))
                print(f"{arch}: {patch.relative_to(PATCHES)} applies exactly to {version} "
                      f"({hunks} hunks)")
    extra = {p.name for p in PATCHES.glob("*.patch")} - set(POLICIES.values())
    if extra:
        raise BuildError(f"patches with no policy: {', '.join(sorted(extra))}")


TRACE_HEADER = """\
wakebench lab only, part of no policy: the sched_wake_decision event on the {series} series
(runners/lab/KERNELS.md, "The decision event"). Generated by `build-kernel.sh
--write-trace-patches` from runners/lab/wblab/tracepatch.py and runners/lab/trace/ after
{patches}; edit those, not this file.
"""


def write_trace_patches():
    """--write-trace-patches: patches/trace/<series>.patch for every series, from tracepatch's
    edits of that series' patched fair.c and core.c."""
    headers = {n: (tracepatch.HEADERS / n).read_text() for n in tracepatch.NEW_FILES}
    TRACE.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="wb-trace-patches-") as tmp:
        for policy, root in series_roots(tmp).items():
            before = policy_patches(policy)
            sched = root / "kernel/sched"
            names = ", ".join(p.name for p in before) or "no policy patch"
            try:
                text = tracepatch.series_patch(
                    TRACE_HEADER.format(series=policy, patches=names),
                    (sched / "fair.c").read_text(), (sched / "core.c").read_text(), headers)
            except tracepatch.EditError as e:
                raise BuildError(f"{policy}: {e}")
            (TRACE / f"{policy}.patch").write_text(text)
            print(f"trace: wrote {TRACE / f'{policy}.patch'}")
    return 0


def make_env(arch="x86_64"):
    """make's ARCH for the guest, and Debian's cross compiler when the host is another one."""
    a = ARCHES[arch]
    env = dict(os.environ, ARCH=a["kernel_arch"])
    if host_arch() != arch:
        env["CROSS_COMPILE"] = a["triplet"] + "-"
    return env


def prepare_source(tree, policy, patches):
    """kernel/sched restored from the pristine copy, then `patches` applied exactly."""
    restore_pristine(tree)
    apply_patches(patches, tree / "src")
    if policy == GATED:
        check_features(tree / "src")


def run_make(src, bdir, jobs, nice, args, logname="build.log", arch="x86_64"):
    """make O=bdir -jN args, niced, its output in bdir/logname; returns that log's text."""
    logfile = bdir / logname
    with open(logfile, "w") as f:
        rc = subprocess.run(["nice", "-n", str(nice), "make", f"O={bdir}", f"-j{jobs}"] + args,
                            cwd=src, env=make_env(arch), stdout=f, stderr=subprocess.STDOUT)
    text = logfile.read_text(errors="replace")
    if rc.returncode:
        raise BuildFailed(f"make failed ({rc.returncode}), end of {logfile}:\n"
                          + "\n".join(text.splitlines()[-25:]))
    return text
