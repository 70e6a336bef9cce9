#!/usr/bin/env python3
"""Guest kernels for the topology lab, built from Debian's linux-source-6.12
(runners/lab/KERNELS.md).

Run through build-kernel.sh, which installs the build dependencies first:
  build-kernel.sh --policy sync-pair [--lockdep] [--jobs N]   prints the bzImage's absolute path
  build-kernel.sh --gated                one kernel with every policy behind a sched feature
  build-kernel.sh --gated --distro-config   compiles its kernel/sched/ with Debian's full config
  build-kernel.sh --compare-gated        the gated fair.c, one feature on, vs that policy's own
  build-kernel.sh --check-patches        every patch (and the gated series) applies exactly
  build-kernel.sh --write-trace-patches  regenerates patches/trace/<series>.patch (wblab/tracepatch)
  build-kernel.sh --compare-trace        each series' fair.c with and without its trace patch
  build-kernel.sh --patch FILE           your patch on the lab's source, then the decision event
  build-kernel.sh --kernel-tree DIR      your own 6.12.y tree, out of tree, with the event

One source tree per source version (<cache>/tree-<version>/src, never patched in place without
being restored first from <cache>/tree-<version>/pristine), one build directory per config
(build/, build-lockdep/; build-distro/ for --distro-config): switching policy restores
kernel/sched, applies the new patch (or the gated series) and lets make rebuild what changed.
Images are cached by source version, policy, patch hash and config hash; a second call with the
same inputs builds nothing.

Here: the command line and the image build (its config, its cache); kerneltree.py holds the
source, the patches and make, kernelcompare.py the checks that compile and compare.
"""
import argparse
import contextlib
import fcntl
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import NamedTuple

from kernelcompare import DISTRO_PACKAGE, compare_gated, compare_trace, distro_compile
from kerneltree import BuildError, GATED, HERE, cache_dir, check_patches, \
    config_mismatches, ensure_tree, kernel_patches, log, make_env, parse_fragment, \
    prepare_source, run_make, sha256, source_package, upstream_version, write_trace_patches
# Policies with their patch (POLICIES; None: the unpatched source), and those another policy's
# kernel runs (ALIASES: current-cpu needs no patch, 6.12's select_task_rq_fair() already returns
# the waker's CPU for WF_CURRENT_CPU, KERNELS.md), from registry/registry.json.
from wblab.registry import ALIASES, ARCHITECTURES as ARCHES, FEATURES, KERNELS as POLICIES


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


def chosen_kernel(policy, gated):
    """--policy NAME and/or --gated -> the kernel to build."""
    if gated and policy and resolve_policy(policy) != GATED:
        raise BuildError(f"--gated and --policy {policy}: give one")
    if not (gated or policy):
        raise BuildError("give --policy NAME, --gated or --check-patches")
    return GATED if gated else resolve_policy(policy)


def patches_sha(patches):
    """One patch: its sha256 (as before the series existed); a series: that of the
    concatenation of its files in order; none: None."""
    return sha256(b"".join(p.read_bytes() for p in patches)) if patches else None


# The guest architectures (registry.json: the kernel's ARCH, Debian's cross compiler, the image
# make builds and where it lands). The fragments are kernel.config (every guest),
# kernel-<arch>.config (its boot devices and firmware tables) and, for --lockdep,
# kernel-lockdep.config.
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


# ----------------------------------------------------------------------------------------------
# Config, build

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


class BuildOpts(NamedTuple):
    """How an image is built: for which architecture, with lockdep or not, make -j and nice."""
    arch: str = "x86_64"
    lockdep: bool = False
    jobs: int = 2
    nice: int = 15


def config_of(arch, lockdep):
    """(the config fragments, the sha256 of their bytes in merge order)."""
    frags = fragments(arch, lockdep)
    return frags, sha256(b"".join(f.read_bytes() for f in frags))


@contextlib.contextmanager
def cache_lock(cache):
    """One build at a time in the cache (its trees, their build directories)."""
    cache.mkdir(parents=True, exist_ok=True)
    with open(cache / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def build_image(src, bdir, out, meta, opts, local, extra=None, started=None):
    """Configures `bdir` (the lab's fragments) for the prepared source `src`, makes the image
    with LOCALVERSION=-<local> and stores it in `out` with `meta` (plus its arch, lockdep,
    config_sha256, build_seconds) and the `extra` files ({name: text}); returns the image.
    The image directory appears whole or not at all (a temporary one renamed); build_seconds
    count from `started` (time.monotonic(); default now)."""
    frags, config_sha = config_of(opts.arch, opts.lockdep)
    target = ARCHES[opts.arch]["kernel_target"]
    t0 = started or time.monotonic()
    configure(src, bdir, frags, config_sha, opts.arch)
    log(f"building {meta.get('source_version')} {opts.arch} {local}"
        f"{' (lockdep)' if opts.lockdep else ''} with -j{opts.jobs}, log {bdir / 'build.log'}")
    run_make(src, bdir, opts.jobs, opts.nice, [f"LOCALVERSION=-{local}", target], arch=opts.arch)
    seconds = round(time.monotonic() - t0, 1)
    tmp = out.with_name(f".{out.name}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    shutil.copyfile(bdir / ARCHES[opts.arch]["kernel_image"], tmp / target)
    shutil.copyfile(bdir / ".config", tmp / "config")
    for name, text in (extra or {}).items():
        (tmp / name).write_text(text)
    meta = dict(meta, arch=opts.arch, config_sha256=config_sha, lockdep=opts.lockdep,
                build_seconds=seconds)
    (tmp / "meta.json").write_text(json.dumps(meta, indent=2) + "\n")
    tmp.rename(out)
    log(f"built in {seconds} s: {out / target}")
    return out / target


def build(policy, lockdep, jobs, nice, arch="x86_64"):
    debian = source_package()
    version = upstream_version(debian)
    _, config_sha = config_of(arch, lockdep)
    patches = kernel_patches(policy, arch=arch)
    patch_sha = patches_sha(patches)
    cache = cache_dir()
    out = image_dir(cache, version, arch, policy, lockdep, patch_sha, config_sha)
    target = ARCHES[arch]["kernel_target"]
    if (out / "meta.json").exists():
        return out / target
    with cache_lock(cache):  # one tree: one build at a time
        if (out / "meta.json").exists():
            return out / target
        t0 = time.monotonic()
        tree = ensure_tree(cache, version)
        prepare_source(tree, policy, patches)
        meta = {"policy": policy, "source_version": version, "source_package": debian,
                "patch_sha256": patch_sha}
        if policy == GATED:
            meta.update(patches=[p.name for p in patches], features=FEATURES)
        return build_image(tree / "src", tree / build_dir_name(arch, lockdep), out, meta,
                           BuildOpts(arch, lockdep, jobs, nice), policy, started=t0)


def parser():
    """build-kernel.sh's options."""
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
    ap.add_argument("--patch", metavar="FILE",
                    help="your patch (-p1, kernel/sched only) on the lab's 6.12 source, then the "
                         "decision event; cached by the patch's sha256 (KERNELS.md)")
    ap.add_argument("--kernel-tree", metavar="DIR",
                    help="your own clean 6.12.y tree, built out of tree with the event and the "
                         "lab's config; the tree is only read (KERNELS.md)")
    return ap


def main(argv=None):
    args = parser().parse_args(argv)
    try:
        if args.patch or args.kernel_tree:
            return build_user(args)
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


def build_user(args):
    """--patch FILE or --kernel-tree DIR (kerneluser.py): prints the image's path."""
    import kerneluser
    given = [o for o, v in (("--patch", args.patch), ("--kernel-tree", args.kernel_tree),
                            ("--policy", args.policy), ("--gated", args.gated),
                            ("--distro-config", args.distro_config),
                            ("--compare-gated", args.compare_gated)) if v]
    if len(given) > 1:
        raise BuildError(f"{' and '.join(given)}: give one kernel")
    if args.jobs < 1:
        raise BuildError(f"--jobs {args.jobs}: must be at least 1")
    how = (args.arch, args.lockdep, args.jobs, args.nice)
    print(kerneluser.build_patch(args.patch, *how) if args.patch else
          kerneluser.build_tree(args.kernel_tree, *how))
    return 0


if __name__ == "__main__":
    sys.exit(main())
