#!/usr/bin/env python3
"""Guest kernels for the topology lab, built from Debian's linux-source-6.12 (runners/lab/KERNELS.md).

Run through build-kernel.sh, which installs the build dependencies first:
  build-kernel.sh --policy sync-pair [--lockdep] [--jobs N]   prints the bzImage's absolute path
  build-kernel.sh --gated                one kernel with every policy behind a sched feature
  build-kernel.sh --gated --distro-config   compiles its kernel/sched/ with Debian's full config
  build-kernel.sh --compare-gated        the gated fair.c, one feature on, vs that policy's own
  build-kernel.sh --check-patches        every patch (and the gated series) applies exactly
  build-kernel.sh --write-trace-patches  regenerates patches/trace/<series>.patch (wblab/tracepatch)
  build-kernel.sh --compare-trace        each series' fair.c with and without its trace patch

One source tree per source version (<cache>/tree-<version>/src, never patched in place without
being restored first from <cache>/tree-<version>/pristine), one build directory per config
(build/, build-lockdep/; build-distro/ for --distro-config): switching policy restores
kernel/sched, applies the new patch (or the gated series) and lets make rebuild what changed.
Images are cached by source version, policy, patch hash and config hash; a second call with the
same inputs builds nothing.
"""
import argparse
import difflib
import fcntl
import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# Policies with their patch (POLICIES; None: the unpatched source), and those another policy's
# kernel runs (ALIASES: current-cpu needs no patch, 6.12's select_task_rq_fair() already returns
# the waker's CPU for WF_CURRENT_CPU, KERNELS.md), from registry/registry.json.
from wblab import tracepatch
from wblab.registry import ALIASES, ARCHITECTURES as ARCHES, FEATURES, KERNELS as POLICIES, \
    host_arch

HERE = Path(__file__).resolve().parent
PATCHES = HERE / "patches"
# The guest architectures (registry.json: the kernel's ARCH, Debian's cross compiler, the image
# make builds and where it lands). The fragments are kernel.config (every guest),
# kernel-<arch>.config (its boot devices and firmware tables) and, for --lockdep,
# kernel-lockdep.config.
PACKAGE = "linux-source-6.12"
TARBALL = Path("/usr/src/linux-source-6.12.tar.xz")
TOP = "linux-source-6.12"
# Patches may only touch files below these directories: they are what gets restored.
PATCHABLE = ["kernel/sched"]
# The gated kernel: patches/gated/*.patch in name order, each policy behind its sched feature
# (FEATURES), all off by default (mainline 6.12).
GATED = "gated"
SERIES = PATCHES / GATED
# The decision event (wblab/tracepatch.py): patches/trace/<series>.patch, applied after the
# series' policy patches in every lab kernel.
TRACE = PATCHES / "trace"
# Debian's full amd64 config, from Debian's linux-config-6.12 package (--distro-config).
DISTRO_PACKAGE = "linux-config-6.12"
DISTRO_CONFIG = Path("/usr/src/linux-config-6.12/config.amd64_none_amd64.xz")
# What the distro compile must keep from Debian's config for the check to mean anything.
DISTRO_WANTED = {"CONFIG_SMP": "y", "CONFIG_SCHED_SMT": "y", "CONFIG_SCHED_MC": "y",
                 "CONFIG_NUMA": "y", "CONFIG_SCHED_DEBUG": "y", "CONFIG_JUMP_LABEL": "y"}


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

def resolve_policy(name):
    name = ALIASES.get(name, name)
    if name not in POLICIES and name != GATED:
        known = ", ".join(list(POLICIES) + list(ALIASES) + [GATED])
        raise BuildError(f"unknown policy '{name}' (known: {known})")
    return name


def policy_help():
    """'mainline (alias current-cpu), sync-pair, ... or sync-2017': the registry's policies."""
    names = [p + "".join(f" (alias {a})" for a, to in ALIASES.items() if to == p) for p in POLICIES]
    return ", ".join(names) + f" or {GATED} (every policy behind its sched feature)"


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


def kernel_patches(policy, series_dir=None):
    """The patches a kernel is built with: its policy patches, then its decision-event patch."""
    return policy_patches(policy, series_dir) + [TRACE / f"{policy}.patch"]


def patches_sha(patches):
    """One patch: its sha256 (as before the series existed); a series: that of the
    concatenation of its files in order; none: None."""
    return sha256(b"".join(p.read_bytes() for p in patches)) if patches else None


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


def specialise(fair_c, on, features):
    """fair.c with every `sched_feat(NAME)` of `features` replaced by 1 for NAME == on, else 0:
    the source the compiler sees for a gated kernel with only `on` set (None: all off)."""
    for name in features:
        fair_c = re.sub(rf"\bsched_feat\({name}\)", "1" if name == on else "0", fair_c)
    return fair_c


def compile_command(cmd_file, source, obj):
    """The compiler command a kbuild .<name>.o.cmd file saved, for `source` into `obj`: no
    dependency file, no objtool pass (it follows the ';')."""
    first = cmd_file.splitlines()[0] if cmd_file else ""
    if ":=" not in first or " -o " not in first:
        raise BuildError("not a kbuild .o.cmd file (no 'savedcmd_... := ... -o ...' line)")
    args = [a for a in shlex.split(first.split(":=", 1)[1].split(";")[0])
            if not a.startswith("-Wp,-MMD")]
    args[args.index("-o") + 1] = str(obj)
    args[-1] = str(source)
    return args


def objdump_functions(text):
    """`objdump -dr --no-show-raw-insn` output -> {function: [instruction lines]}, without the
    addresses (kept: offsets within a function, relocations with .text+offset blanked)."""
    funcs, cur = {}, None
    for line in text.splitlines():
        m = re.match(r"^[0-9a-f]+ <(.+)>:$", line)
        if m:
            cur = funcs.setdefault(m.group(1), [])
        elif line.startswith("Disassembly of section"):
            cur = None  # not part of the function before it
        elif cur is not None and line.strip():
            line = re.sub(r"^\s*[0-9a-f]+:\s*", "", line)
            line = re.sub(r"\b[0-9a-f]+ <", "<", line)
            cur.append(re.sub(r"\.(text|rodata|data|bss)([\w.]*)\+0x[0-9a-f]+", r".\1\2+X", line))
    for body in funcs.values():  # alignment padding after the last instruction
        while body and re.fullmatch(r"(xchg   %ax,%ax|nop\w*( .*)?|cs nopw .*|int3)", body[-1]):
            body.pop()
    return funcs


def function_differences(gated, reference):
    """(functions in both, those whose code differs, those in one object only)."""
    both = sorted(set(gated) & set(reference))
    return (both, [f for f in both if gated[f] != reference[f]],
            sorted(set(gated) ^ set(reference)))


def compile_warnings(log_text):
    """The compiler's warning and error lines in a make log."""
    return [line for line in log_text.splitlines()
            if re.search(r": (warning|error): ", line)]


def chosen_kernel(policy, gated):
    """--policy NAME and/or --gated -> the kernel to build."""
    if gated and policy and resolve_policy(policy) != GATED:
        raise BuildError(f"--gated and --policy {policy}: give one")
    if not (gated or policy):
        raise BuildError("give --policy NAME, --gated or --check-patches")
    return GATED if gated else resolve_policy(policy)


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


def fragments(arch, lockdep):
    """The config fragments of a guest kernel for `arch`, in merge order."""
    if arch not in ARCHES:
        raise BuildError(f"unknown architecture '{arch}' (known: {', '.join(ARCHES)})")
    return [HERE / "kernel.config", HERE / f"kernel-{arch}.config"] + \
        ([HERE / "kernel-lockdep.config"] if lockdep else [])


def image_dir(cache, version, arch, policy, lockdep, patch_sha, config_sha):
    """<version>-<arch>-<policy>[-lockdep]-<patch or series sha, 12|nopatch>-<config sha, 12>"""
    name = f"{version}-{arch}-{policy}{'-lockdep' if lockdep else ''}-" \
           f"{patch_sha[:12] if patch_sha else 'nopatch'}-{config_sha[:12]}"
    return Path(cache) / name


def build_dir_name(arch, lockdep):
    """x86_64 keeps the build directories it always had (build/, build-lockdep/)."""
    return "build" + ("" if arch == "x86_64" else f"-{arch}") + ("-lockdep" if lockdep else "")


def sha256(data):
    return hashlib.sha256(data).hexdigest()


# ----------------------------------------------------------------------------------------------
# Source, patches, config, build

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
    if not (tree / ".extracted").exists():
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


def configure(src, build, fragments, config_sha, arch):
    """tinyconfig + the fragments, then fail if any asked-for option did not survive."""
    stamp = build / ".wb-config-sha256"
    dotconfig = build / ".config"
    if not (stamp.exists() and stamp.read_text() == config_sha and dotconfig.exists()):
        build.mkdir(parents=True, exist_ok=True)
        run = dict(cwd=src, env=make_env(arch), check=True, stdout=subprocess.DEVNULL)
        subprocess.run(["make", f"O={build}", "tinyconfig"], **run)
        subprocess.run(["scripts/kconfig/merge_config.sh", "-m", "-O", str(build),
                        str(dotconfig)] + [str(f) for f in fragments], **run)
        subprocess.run(["make", f"O={build}", "olddefconfig"], **run)
        stamp.write_text(config_sha)
    wanted = {}
    for f in fragments:
        wanted.update(parse_fragment(f.read_text()))
    bad = config_mismatches(wanted, dotconfig.read_text())
    if bad:
        stamp.unlink()
        raise BuildError("the config lost options (a dependency is missing):\n  "
                         + "\n  ".join(bad))


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


def distro_config():
    """Debian's full amd64 config, as linux-config-6.12 installs it (xz), and its version."""
    out = subprocess.run(["dpkg-query", "-W", "-f=${Version}", DISTRO_PACKAGE],
                         capture_output=True, text=True)
    if out.returncode or not out.stdout or not DISTRO_CONFIG.is_file():
        raise BuildError(f"{DISTRO_PACKAGE} is not installed (apt-get install {DISTRO_PACKAGE})")
    data = subprocess.run(["xz", "-dc", str(DISTRO_CONFIG)], capture_output=True, check=True)
    return data.stdout, out.stdout


def distro_configure(src, bdir, config):
    """bdir/.config: Debian's config through olddefconfig (this compiler, no module signing
    keys needed for kernel/sched/), redone only when Debian's config changes."""
    stamp = bdir / ".wb-config-sha256"
    if not (stamp.exists() and stamp.read_text() == sha256(config)):
        bdir.mkdir(parents=True, exist_ok=True)
        (bdir / ".config").write_bytes(config)
        subprocess.run(["make", f"O={bdir}", "olddefconfig"], cwd=src, env=make_env(),
                       check=True, stdout=subprocess.DEVNULL)
        stamp.write_text(sha256(config))
    bad = config_mismatches(DISTRO_WANTED, (bdir / ".config").read_text())
    if bad:
        raise BuildError("Debian's config lost options here: " + "; ".join(bad))


def distro_compile(policy, jobs, nice):
    """--distro-config: kernel/sched/ of the patched tree compiled with Debian's full config
    in <tree>/build-distro (not the whole kernel); prints what it compiled and how long."""
    config, config_version = distro_config()
    version = upstream_version(source_package())
    cache = cache_dir()
    cache.mkdir(parents=True, exist_ok=True)
    with open(cache / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        t0 = time.monotonic()
        tree = ensure_tree(cache, version)
        prepare_source(tree, policy, kernel_patches(policy))
        bdir = tree / "build-distro"
        distro_configure(tree / "src", bdir, config)
        log(f"compiling kernel/sched/ of {version} {policy} with Debian's config "
            f"({DISTRO_PACKAGE} {config_version}), -j{jobs}, log {bdir / 'sched.log'}")
        text = run_make(tree / "src", bdir, jobs, nice, ["kernel/sched/"], "sched.log")
        seconds = round(time.monotonic() - t0, 1)
    objs = sorted(p.name for p in (bdir / "kernel/sched").glob("*.o"))
    warnings = compile_warnings(text)
    for w in warnings:
        print("  " + (w if len(w) <= 98 else w[:95] + "..."))
    print(f"{version} {policy}: kernel/sched/ compiled with Debian's {DISTRO_CONFIG.name}\n"
          f"  ({DISTRO_PACKAGE} {config_version}) in {seconds} s, {len(warnings)} compiler "
          f"warnings\n  objects: {' '.join(objs)}")
    return 0


def patched_copy(tree, patches, dest):
    """A copy of the pristine kernel/sched in dest with `patches` applied; its directory."""
    shutil.copytree(tree / "pristine" / "kernel/sched", dest / "kernel/sched")
    apply_patches(patches, dest)
    return dest / "kernel/sched"


def fair_functions(cmd_file, sched_dir, build_dir, nice, defines=()):
    """sched_dir/fair.c compiled with the lab build's fair.o command (its quoted includes come
    from sched_dir) plus -D`defines`, disassembled per function."""
    obj = sched_dir / "fair.o"
    cmd = compile_command(cmd_file, sched_dir / "fair.c", obj)
    cmd[-1:-1] = [f"-D{d}" for d in defines]
    cc = subprocess.run(["nice", "-n", str(nice)] + cmd,
                        cwd=build_dir, capture_output=True, text=True)
    if cc.returncode or compile_warnings(cc.stderr):
        raise BuildFailed(f"compiling {sched_dir / 'fair.c'}:\n"
                          + "\n".join(cc.stderr.splitlines()[-15:]))
    out = subprocess.run(["objdump", "-dr", "--no-show-raw-insn", str(obj)], check=True,
                         capture_output=True, text=True)
    return objdump_functions(out.stdout)


def compare_one(policy, gated_dir, tree, tmp, cmd_file, nice):
    """One line: the gated fair.c with only `policy`'s feature set vs `policy`'s own kernel."""
    feature = FEATURES.get(policy)
    spec = tmp / f"only-{policy}" / "kernel/sched"
    shutil.copytree(gated_dir, spec)
    (spec / "fair.c").write_text(specialise((gated_dir / "fair.c").read_text(), feature,
                                            FEATURES.values()))
    ref = patched_copy(tree, policy_patches(policy), tmp / policy)
    build_dir = tree / "build"
    both, differ, alone = function_differences(fair_functions(cmd_file, spec, build_dir, nice),
                                               fair_functions(cmd_file, ref, build_dir, nice))
    print(f"{feature or 'no feature'} vs {policy}: {len(both)} functions in fair.o, "
          f"{len(differ)} differ, {len(alone)} in one object only")
    for name in differ:
        print(f"  differs: {name}")
    for name in alone:
        print(f"  in one only: {name}")


def compile_tree():
    """(cache, tree, the lab build's .fair.o.cmd) for the comparisons, which compile fair.c
    copies with the x86 build's own command. Raises when no lab kernel was built yet."""
    version = upstream_version(source_package())
    cache = cache_dir()
    tree = cache / f"tree-{version}"
    cmd_path = tree / "build/kernel/sched/.fair.o.cmd"
    if not cmd_path.is_file():
        raise BuildError(f"{cmd_path} is missing: build an x86_64 lab kernel first")
    return cache, tree, cmd_path


def compare_gated(nice):
    """--compare-gated: for mainline and each patched policy, fair.c of the gated series with
    only that policy's feature on (sched_feat() replaced by constants) and fair.c of the policy's
    own kernel, compiled alike with the lab build's command; prints which functions differ."""
    cache, tree, cmd_path = compile_tree()
    with open(cache / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # the build tree's headers stay as they are
        with tempfile.TemporaryDirectory(prefix="wb-gated-compare-") as tmp:
            tmp = Path(tmp)
            gated_dir = patched_copy(tree, series_files(SERIES), tmp / GATED)
            for policy in POLICIES:
                compare_one(policy, gated_dir, tree, tmp, cmd_path.read_text(), nice)
    return 0


def trace_sites(before, after):
    """The instruction lines `after` adds to and drops from `before` (difflib opcodes over the
    normalised disassembly of one function): (added, dropped)."""
    added, dropped = [], []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, before, after,
                                                       autojunk=False).get_opcodes():
        if tag in ("replace", "delete"):
            dropped += before[i1:i2]
        if tag in ("replace", "insert"):
            added += after[j1:j2]
    return added, dropped


def compare_trace(nice):
    """--compare-trace: each series' fair.c with its policy patches, and with its decision-event
    patch too, compiled alike with the lab build's command. With the notes compiled out
    (WB_DECISION_NOTES_OFF) every function the series had must compile to the same code: the
    patch's edits change nothing else. With them in, which functions differ and how much of
    select_task_rq_fair (the notes' static branches and what the compiler moved around them)."""
    cache, tree, cmd_path = compile_tree()
    with open(cache / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        with tempfile.TemporaryDirectory(prefix="wb-trace-compare-") as tmp:
            tmp = Path(tmp)
            bad = False
            for policy in list(POLICIES) + [GATED]:
                plain = patched_copy(tree, policy_patches(policy), tmp / policy / "plain")
                traced = patched_copy(tree, kernel_patches(policy), tmp / policy / "traced")
                cmd = cmd_path.read_text()
                a = fair_functions(cmd, plain, tree / "build", nice)
                off = fair_functions(cmd, traced, tree / "build", nice, ["WB_DECISION_NOTES_OFF"])
                on = fair_functions(cmd, traced, tree / "build", nice)
                _, off_differ, _ = function_differences(a, off)
                _, on_differ, _ = function_differences(a, on)
                added, dropped = trace_sites(a["select_task_rq_fair"], on["select_task_rq_fair"])
                bad = bad or bool(off_differ)
                print(f"{policy}: notes compiled out: "
                      f"{', '.join(off_differ) + ' DIFFER' if off_differ else 'every function the same'}"
                      f"; notes in: {len(on_differ)} of {len(a)} differ ({', '.join(on_differ)}), "
                      f"select_task_rq_fair {len(a['select_task_rq_fair'])} instructions, "
                      f"{len(added)} added, {len(dropped)} dropped or moved")
    return 1 if bad else 0


def build(policy, lockdep, jobs, nice, arch="x86_64"):
    debian = source_package()
    version = upstream_version(debian)
    frags = fragments(arch, lockdep)
    config_sha = sha256(b"".join(f.read_bytes() for f in frags))
    patches = kernel_patches(policy)
    patch_sha = patches_sha(patches)
    cache = cache_dir()
    out = image_dir(cache, version, arch, policy, lockdep, patch_sha, config_sha)
    target = ARCHES[arch]["kernel_target"]
    if (out / "meta.json").exists():
        return out / target
    cache.mkdir(parents=True, exist_ok=True)
    with open(cache / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one tree: one build at a time
        if (out / "meta.json").exists():
            return out / target
        t0 = time.monotonic()
        tree = ensure_tree(cache, version)
        src = tree / "src"
        prepare_source(tree, policy, patches)
        bdir = tree / build_dir_name(arch, lockdep)
        configure(src, bdir, frags, config_sha, arch)
        log(f"building {version} {arch} {policy}{' (lockdep)' if lockdep else ''} with "
            f"-j{jobs}, log {bdir / 'build.log'}")
        run_make(src, bdir, jobs, nice, [f"LOCALVERSION=-{policy}", target], arch=arch)
        seconds = round(time.monotonic() - t0, 1)
        tmp = out.with_name(f".{out.name}.tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir()
        shutil.copyfile(bdir / ARCHES[arch]["kernel_image"], tmp / target)
        shutil.copyfile(bdir / ".config", tmp / "config")
        meta = {"policy": policy, "arch": arch, "source_version": version,
                "source_package": debian, "patch_sha256": patch_sha, "config_sha256": config_sha,
                "lockdep": lockdep, "build_seconds": seconds}
        if policy == GATED:
            meta.update(patches=[p.name for p in patches], features=FEATURES)
        (tmp / "meta.json").write_text(json.dumps(meta, indent=2) + "\n")
        tmp.rename(out)
        log(f"built in {seconds} s: {out / target}")
        return out / target


def main(argv=None):
    ap = argparse.ArgumentParser(prog="build-kernel.sh", description=__doc__.split("\n\n")[0])
    ap.add_argument("--policy", help=policy_help())
    ap.add_argument("--lockdep", action="store_true",
                    help="PROVE_LOCKING/PROVE_RCU build (its own build directory and image)")
    ap.add_argument("--arch", choices=list(ARCHES), default="x86_64",
                    help="the guest's architecture (default x86_64; others cross-compile with "
                         "Debian's gcc-<triplet>)")
    ap.add_argument("--jobs", type=int, default=2, help="make -j (default 2)")
    ap.add_argument("--nice", type=int, default=15,
                    help="niceness of the build (default 15: a shared box stays usable)")
    ap.add_argument("--gated", action="store_true",
                    help=f"the same as --policy {GATED}: every policy behind its sched feature")
    ap.add_argument("--distro-config", action="store_true",
                    help="compile only kernel/sched/ of the patched tree, with Debian's full "
                         f"amd64 config ({DISTRO_PACKAGE}), in its own build directory")
    ap.add_argument("--compare-gated", action="store_true",
                    help="compile the gated fair.c with one feature on at a time and that "
                         "policy's own fair.c alike; list the functions whose code differs")
    ap.add_argument("--check-patches", action="store_true",
                    help="only check that every patch applies with no offset and no fuzz")
    ap.add_argument("--write-trace-patches", action="store_true",
                    help="regenerate patches/trace/<series>.patch from wblab/tracepatch.py")
    ap.add_argument("--compare-trace", action="store_true",
                    help="compile each series' fair.c with and without its decision-event "
                         "patch; list the functions whose code differs and how")
    args = ap.parse_args(argv)
    try:
        if args.check_patches:
            check_patches()
            return 0
        if args.write_trace_patches:
            return write_trace_patches()
        if args.compare_trace:
            return compare_trace(args.nice)
        if args.arch != "x86_64" and (args.distro_config or args.compare_gated):
            raise BuildError("--distro-config and --compare-gated are x86_64 only")
        if args.compare_gated:
            return compare_gated(args.nice)
        policy = chosen_kernel(args.policy, args.gated)
        if args.jobs < 1:
            raise BuildError(f"--jobs {args.jobs}: must be at least 1")
        if args.distro_config:
            if args.lockdep:
                raise BuildError("--distro-config uses Debian's config: no --lockdep")
            return distro_compile(policy, args.jobs, args.nice)
        print(build(policy, args.lockdep, args.jobs, args.nice, args.arch))
        return 0
    except BuildError as e:
        print(f"build-kernel: {e}", file=sys.stderr)
        return e.status
    except subprocess.CalledProcessError as e:
        print(f"build-kernel: {' '.join(map(str, e.cmd))} exited {e.returncode}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
