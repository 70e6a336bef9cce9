#!/bin/busybox sh
# /init of the topology-lab guest (runners/lab/wakebench-lab builds the initramfs around it).
#
# The console (ttyS0; ttyAMA0 on arm64) carries kernel messages and human-readable progress. Files
# go back to the host on the transfer port $WBLAB_XFER (/lab/env: the second serial port ttyS1 on
# x86_64, a virtio console hvc0 on arm64), which carries nothing else: no console= points at it,
# so kernel messages cannot interleave. Each file is base64 between unique markers with its size and sha256,
# and the host verifies both, so a truncated or garbled transfer is detected, never half-trusted.
# A file over 1 MiB goes gzipped (a cell's decision records: some 50 MB of text each, minutes on an
# emulated serial port as they are); bytes and sha256 are still the file's own.
#   WBLAB-BEGIN <name> <bytes> <sha256> [gzip]
#   <base64 lines>
#   WBLAB-END <name>
#   WBLAB-EXIT <step> <rc>        after each step of /lab/job.sh
#   WBLAB-DONE                    the guest finished its job (poweroff follows)
/bin/busybox --install -s /bin
export PATH=/usr/bin:/bin
. /lab/env
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/shm /tmp /run
# Boost.Interprocess shared memory (processes mode) lives in /dev/shm.
mount -t tmpfs tmpfs /dev/shm
# /tmp/out holds what the guest ships, decision records too (60-150 MB a setting), in tmpfs's
# default half of the RAM: with 85% a guest whose records outgrew it had wakebench OOM-killed
# instead of a full /tmp that says so (2026-12-04); the host gives such guests more RAM.
mount -t tmpfs tmpfs /tmp
# wakebench's settings journal (--ab, --trace-wakeups) lives in /run/wakebench.
mount -t tmpfs tmpfs /run
# Sched-domain names (SMT/MC/DIE/NUMA) are only in debugfs (kernel/sched/debug.c).
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
stty -F "$WBLAB_XFER" raw -echo 2>/dev/null
# tcp-loopback connects to 127.0.0.1: without an init system nothing brings `lo` up.
ip link set lo up 2>/dev/null || ifconfig lo 127.0.0.1 up
OUT=/tmp/out
mkdir -p "$OUT"

xfer() { echo "$*" > "$WBLAB_XFER"; }

# ship FILE: send one file to the host.
ship() {
  [ -f "$1" ] || return 0
  name=$(basename "$1")
  size=$(wc -c < "$1")
  sum=$(sha256sum "$1" | cut -d' ' -f1)
  if [ "$size" -gt 1048576 ]; then
    { echo "WBLAB-BEGIN $name $size $sum gzip"; gzip -1 -c "$1" | base64; echo "WBLAB-END $name"; } \
      > "$WBLAB_XFER"
  else
    { echo "WBLAB-BEGIN $name $size $sum"; base64 "$1"; echo "WBLAB-END $name"; } > "$WBLAB_XFER"
  fi
}

# step NAME CMD...: run one job step, report its exit code, ship what it wrote.
step() {
  name=$1
  shift
  echo "wakebench-lab guest: step $name: $*"
  "$@"
  rc=$?
  echo "wakebench-lab guest: step $name exited $rc"
  xfer "WBLAB-EXIT $name $rc"
  for f in "$OUT"/*; do
    case " $SHIPPED " in *" $f "*) ;; *) ship "$f"; SHIPPED="$SHIPPED $f" ;; esac
  done
}

# The guest's own view of its topology, compared on the host with what the preset asked for.
# One record per line: "cpu N key value", "cache N index level shared_cpu_list", "node N cpulist",
# "domain N level name span_hex" (spans from /proc/schedstat, names from debugfs).
dump_sysfs() {
  for c in /sys/devices/system/cpu/cpu[0-9]*; do
    n=${c##*cpu}
    for k in thread_siblings_list core_cpus_list die_cpus_list package_cpus_list \
             physical_package_id die_id core_id cluster_cpus_list; do
      [ -r "$c/topology/$k" ] && echo "cpu $n $k $(cat "$c/topology/$k")"
    done
    for i in "$c"/cache/index*; do
      [ -d "$i" ] || continue
      echo "cache $n ${i##*/} $(cat "$i/level") $(cat "$i/type") $(cat "$i/shared_cpu_list")"
    done
  done
  for d in /sys/devices/system/node/node[0-9]*; do
    [ -d "$d" ] && echo "node ${d##*node} $(cat "$d/cpulist")"
  done
  cpu=-1
  while read -r tag mask rest; do
    case $tag in
      cpu[0-9]*) cpu=${tag#cpu} ;;
      domain[0-9]*)
        lvl=${tag#domain}
        nm=$(cat "/sys/kernel/debug/sched/domains/cpu$cpu/domain$lvl/name" 2>/dev/null)
        echo "domain $cpu $lvl ${nm:-?} $mask" ;;
    esac
  done < /proc/schedstat
  echo "kernel $(uname -r)"
  echo "cmdline $(cat /proc/cmdline)"
}

echo "wakebench-lab guest: up after $(cut -d' ' -f1 /proc/uptime) s (guest clock)"
xfer "WBLAB-HELLO $(uname -r)"
SHIPPED=""
dump_sysfs > "$OUT/sysfs.txt"
ship "$OUT/sysfs.txt"
SHIPPED="$OUT/sysfs.txt"
. /lab/job.sh
xfer "WBLAB-DONE"
echo "wakebench-lab guest: done after $(cut -d' ' -f1 /proc/uptime) s (guest clock)"
sync
poweroff -f
