#!/usr/bin/env bash
# Boots a ppc64le lab kernel on qemu's powernv9 machine (skiboot, TCG) with the SMT layout asked
# for and keeps the console: the guest prints its topology (runners/lab/guest-init.sh's
# dump_sysfs), its sched domains and SMT state, then powers off. No wakebench run.
#   runners/lab/power/boot-powernv.sh [--smp 4,cores=4,threads=1] [--kernel VMLINUX]
#       [--busybox PATH] [--mem 2G] [--timeout 900] [--log FILE] [--append ARGS]
# --kernel defaults to `runners/lab/build-kernel.sh --arch ppc64le --gated` (a cache hit prints
# the cached image at once; otherwise it builds, 10-15 min). --busybox defaults to Debian's
# busybox-static:ppc64el, downloaded once (apt-get download + dpkg -x, nothing installed) into
# $WB_LAB_CACHE (default ~/.cache/wakebench-lab)/busybox-ppc64el. qemu is killed at --timeout
# seconds, on SIGINT/SIGTERM and when the script exits; exit status 0 when the guest finished
# its job, 1 when it did not (hang, panic, timeout), 2 on bad usage or a missing prerequisite.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
lab=$(cd "$here/.." && pwd)
die() { echo "boot-powernv: $*" >&2; exit 2; }

smp=4,cores=4,threads=1 kernel= busybox= mem=2G timeout=900 log= append=
while [ $# -gt 0 ]; do
  [ $# -ge 2 ] || die "$1 needs a value (see the header of $0)"
  case $1 in
    --smp) smp=$2 ;;
    --kernel) kernel=$2 ;;
    --busybox) busybox=$2 ;;
    --mem) mem=$2 ;;
    --timeout) timeout=$2 ;;
    --log) log=$2 ;;
    --append) append=$2 ;;
    *) die "unknown option $1 (see the header of $0)" ;;
  esac
  shift 2
done
[[ $timeout =~ ^[0-9]+$ ]] || die "--timeout wants seconds, not '$timeout'"
threads=$(sed -n 's/.*threads=\([0-9]*\).*/\1/p' <<<"$smp")
log=${log:-$PWD/console-smp-${smp//[,=]/-}.log}

for tool in qemu-system-ppc64 cpio gzip timeout od; do
  command -v "$tool" >/dev/null || die "$tool not found (qemu-system-ppc64: apt-get install" \
    "qemu-system-ppc; cpio, gzip, coreutils)"
done
qemu-system-ppc64 -M help | grep -q '^powernv9 ' || die "this qemu-system-ppc64 has no powernv9"
[ -f /usr/share/qemu/skiboot.lid ] || [ -f /usr/share/qemu-firmware/skiboot.lid ] \
  || die "no skiboot.lid (powernv's firmware, part of qemu-system-data) under /usr/share/qemu"

# ppc64le ELF: EI_CLASS 2 (64-bit), EI_DATA 1 (little-endian), e_machine 21 (EM_PPC64).
is_ppc64le_elf() {
  [ -f "$1" ] && [ "$(od -An -tx1 -j4 -N2 "$1" | tr -d ' ')" = 0201 ] \
    && [ "$(od -An -tu2 -j18 -N2 "$1" | tr -d ' ')" = 21 ]
}

if [ -z "$kernel" ]; then
  kernel=$("$lab/build-kernel.sh" --arch ppc64le --gated) || die "build-kernel.sh failed"
fi
is_ppc64le_elf "$kernel" || die "$kernel is not a ppc64le ELF vmlinux (powernv loads an ELF)"

if [ -z "$busybox" ]; then
  bbdir=${WB_LAB_CACHE:-$HOME/.cache/wakebench-lab}/busybox-ppc64el
  busybox=$bbdir/bin/busybox
  if [ ! -f "$busybox" ]; then
    tmp=$(mktemp -d)
    if ! (cd "$tmp" && apt-get download -q busybox-static:ppc64el >/dev/null 2>&1); then
      rm -rf "$tmp"
      die "cannot download busybox-static:ppc64el (add the architecture first:" \
        "WB_CROSS_PACKAGES_ONLY=1 runners/cross-build.sh ppc64le), or give --busybox"
    fi
    mkdir -p "$bbdir/bin"
    dpkg -x "$tmp"/busybox-static_*.deb "$tmp/root"
    cp "$tmp/root/bin/busybox" "$busybox.tmp"
    mv "$busybox.tmp" "$busybox"
    rm -rf "$tmp"
  fi
fi
is_ppc64le_elf "$busybox" || die "$busybox is not a ppc64le ELF (a static busybox for the guest)"

work=$(mktemp -d "${TMPDIR:-/tmp}/boot-powernv.XXXXXX")
qpid=
cleanup() {
  if [ -n "$qpid" ] && kill -0 "$qpid" 2>/dev/null; then
    kill "$qpid" 2>/dev/null || true
    sleep 1
    kill -9 "$qpid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# The initramfs: guest-init.sh unchanged as /init, the busybox, and a job that prints to the
# console what guest-init writes for the host (its ttyS1 transfers have no port on powernv).
root=$work/root
mkdir -p "$root"/{bin,dev,proc,sys,tmp,lab}
cp "$busybox" "$root/bin/busybox"
cp "$lab/guest-init.sh" "$root/init"
chmod 755 "$root/init" "$root/bin/busybox"
cat >"$root/lab/job.sh" <<'EOF'
echo "=== boot-powernv: kernel $(uname -r), up $(cut -d' ' -f1 /proc/uptime) s"
echo "=== /proc/cmdline: $(cat /proc/cmdline)"
echo "=== /proc/cpuinfo: $(grep -c ^processor /proc/cpuinfo) processors"
head -n 5 /proc/cpuinfo
tail -n 6 /proc/cpuinfo
echo "=== cpus: online $(cat /sys/devices/system/cpu/online)," \
  "possible $(cat /sys/devices/system/cpu/possible)," \
  "smt/control $(cat /sys/devices/system/cpu/smt/control 2>/dev/null || echo -)," \
  "smt/active $(cat /sys/devices/system/cpu/smt/active 2>/dev/null || echo -)"
echo "=== dump_sysfs (/tmp/out/sysfs.txt)"
cat /tmp/out/sysfs.txt
echo "=== ls /sys/kernel/debug/sched/domains/cpu0"
ls /sys/kernel/debug/sched/domains/cpu0
for d in /sys/kernel/debug/sched/domains/cpu*/domain*; do
  [ -d "$d" ] || continue
  echo "$d name $(cat "$d/name") flags $(cat "$d/flags")"
done
echo "=== serial ports: $(ls /dev/ttyS* /dev/hvc* 2>/dev/null | tr '\n' ' ')" \
  "(/dev/ttyS1 is a regular file when the kernel has no 8250 driver)"
echo "=== dmesg: SMP bring-up and sched_verbose"
dmesg | grep -E -i 'smp|thread|brought up|sched.domain|domain-[0-9]|groups:|cpu[0-9]+ attach' \
  | head -n 200
EOF

# The kernel finds /init in the initramfs (cpio newc, gzip: CONFIG_RD_GZIP).
(cd "$root" && find . | cpio -o -H newc --quiet | gzip -9) >"$work/initrd.gz"

cmd=(qemu-system-ppc64 -M powernv9 -cpu power9 -smp "$smp" -m "$mem"
     -accel tcg,thread=single -display none -monitor none -serial "file:$log" -no-reboot
     -kernel "$kernel" -initrd "$work/initrd.gz"
     -append "console=hvc0 panic=-1 sched_verbose $append")
echo "boot-powernv: ${cmd[*]}" >&2
echo "boot-powernv: threads=${threads:-?}, console in $log, timeout $timeout s" >&2
: >"$log"
start=$(date +%s)
# timeout(1) as a backstop: qemu dies even if this script is killed without its traps running.
timeout -k 10 "$((timeout + 30))" "${cmd[@]}" &
qpid=$!
done_re='wakebench-lab guest: done after'
bad_re='Kernel panic|Oops:|soft lockup|detected stalls|self-detected stall'
status=1 why="no end of the job within $timeout s"
while kill -0 "$qpid" 2>/dev/null; do
  if grep -q "$done_re" "$log"; then
    sleep 5  # poweroff -f goes through OPAL; qemu is killed on exit if it is still there
    break
  fi
  if grep -q -E "$bad_re" "$log"; then
    why="kernel trouble: $(grep -m1 -E "$bad_re" "$log" | cut -c1-80)"
    sleep 20  # let the rest of the report reach the log
    break
  fi
  [ $(($(date +%s) - start)) -lt "$timeout" ] || break
  sleep 2
done
if grep -q "$done_re" "$log"; then
  status=0 why="the guest finished its job"
elif ! kill -0 "$qpid" 2>/dev/null && [ "${why#kernel}" = "$why" ]; then
  why="qemu exited before the guest finished"
fi
echo "boot-powernv: $why ($(($(date +%s) - start)) s wall, smp $smp)" >&2
exit $status
