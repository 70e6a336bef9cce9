"""The checks that compile kernel/sched outside a lab image (runners/lab/KERNELS.md), for
kernelbuild.py's --distro-config, --compare-gated and --compare-trace: the patched kernel/sched/
compiled with Debian's full amd64 config, and fair.c copies compiled with the lab build's own
fair.o command, disassembled and compared function by function (the gated series with one
feature on against that policy's own kernel; each series with and without its decision-event
patch).
"""
import difflib
import fcntl
import re
import shlex
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from kerneltree import BuildError, BuildFailed, GATED, SERIES, apply_patches, cache_dir, \
    config_mismatches, ensure_tree, kernel_patches, log, make_env, policy_patches, \
    prepare_source, run_make, series_files, sha256, source_package, upstream_version
from wblab.registry import FEATURES, KERNELS as POLICIES

# Debian's full amd64 config, from Debian's linux-config-6.12 package (--distro-config).
DISTRO_PACKAGE = "linux-config-6.12"
DISTRO_CONFIG = Path("/usr/src/linux-config-6.12/config.amd64_none_amd64.xz")
# What the distro compile must keep from Debian's config for the check to mean anything.
DISTRO_WANTED = {"CONFIG_SMP": "y", "CONFIG_SCHED_SMT": "y", "CONFIG_SCHED_MC": "y",
                 "CONFIG_NUMA": "y", "CONFIG_SCHED_DEBUG": "y", "CONFIG_JUMP_LABEL": "y"}


# ----------------------------------------------------------------------------------------------
# Pure helpers (runners/lab/tests/test_kernelbuild.py)

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


# ----------------------------------------------------------------------------------------------
# --distro-config

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


# ----------------------------------------------------------------------------------------------
# --compare-gated, --compare-trace

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
                out = ", ".join(off_differ) + " DIFFER" if off_differ else \
                    "every function the same"
                print(f"{policy}: notes compiled out: {out}"
                      f"; notes in: {len(on_differ)} of {len(a)} differ ({', '.join(on_differ)}), "
                      f"select_task_rq_fair {len(a['select_task_rq_fair'])} instructions, "
                      f"{len(added)} added, {len(dropped)} dropped or moved")
    return 1 if bad else 0
