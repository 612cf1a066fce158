#!/usr/bin/env bash
# A single-node Slurm cluster on this machine, for the sweep tests and for trying
# `python train.py --multirun hydra/launcher=slurm ...` without a real cluster.
#
#   scripts/slurm-cluster.sh install   apt-get install slurm-wlm munge (when missing; needs root)
#   scripts/slurm-cluster.sh start     munge key, slurm.conf, start munged, slurmctld, slurmd (root);
#                                      returns once `sinfo` shows the node idle
#   scripts/slurm-cluster.sh stop      stop the daemons this script started
#   scripts/slurm-cluster.sh status    daemons and `sinfo`
#   scripts/slurm-cluster.sh env       the lines to eval so that sbatch/sinfo/sacct find the cluster:
#                                      eval "$(scripts/slurm-cluster.sh env)"
#
# Everything lives in $CELLGYM_SLURM_DIR (default /tmp/cellgym-slurm): slurm.conf, state, spool,
# logs and pid files; nothing is written to /etc/slurm, so an existing Slurm set-up is untouched.
# The clients find the cluster through SLURM_CONF=$CELLGYM_SLURM_DIR/slurm.conf. Munge uses the
# system's key (/etc/munge/munge.key, created when missing) and socket. There is no accounting
# database: $CELLGYM_SLURM_DIR/bin/sacct (scripts/slurm-sacct.sh, first on PATH with `env`) answers
# submitit's job-state queries from `scontrol show job`.
#
# No systemd and no cgroups: ProctrackType=proctrack/linuxproc, TaskPlugin=task/none. The node is
# this host (`hostname -s`) at 127.0.0.1; the daemons run as root (SlurmUser=root). Slurm has no
# listen-address setting: slurmctld/slurmd accept on every interface at the ports below, which
# nothing outside a test machine should reach.
set -euo pipefail

DIR=${CELLGYM_SLURM_DIR:-/tmp/cellgym-slurm}
CTLD_PORT=${CELLGYM_SLURMCTLD_PORT:-6817}
SLURMD_PORT=${CELLGYM_SLURMD_PORT:-6818}
PARTITION=${CELLGYM_SLURM_PARTITION:-debug}
WAIT_S=${CELLGYM_SLURM_WAIT_S:-60}
CONF=$DIR/slurm.conf
MUNGE_SOCKET=/run/munge/munge.socket.2

log() { echo "[slurm-cluster] $*" >&2; }
die() { log "error: $*"; exit 1; }
need_root() { [ "$(id -u)" -eq 0 ] || die "$1 needs root (the daemons run as root)"; }

have_slurm() {
  command -v slurmctld >/dev/null 2>&1 && command -v slurmd >/dev/null 2>&1 &&
    command -v sbatch >/dev/null 2>&1 && command -v munged >/dev/null 2>&1
}

do_install() {
  if have_slurm; then
    log "slurm and munge already installed"
    return
  fi
  need_root install
  command -v apt-get >/dev/null 2>&1 || die "install: no apt-get (install slurm-wlm and munge by hand)"
  log "apt-get install slurm-wlm munge"
  apt-get update -qq
  # policy-rc.d-less machines would start the packaged services; this script starts its own.
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    slurm-wlm munge >/dev/null
  have_slurm || die "install: slurmctld/slurmd/sbatch/munged still missing"
}

# pid of a live process recorded in a pid file, or nothing
pid_of() {
  local f=$1 pid
  [ -f "$f" ] || return 0
  pid=$(cat "$f" 2>/dev/null || true)
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then echo "$pid"; fi
}

munge_ok() { munge -n -S "$MUNGE_SOCKET" 2>/dev/null | unmunge -S "$MUNGE_SOCKET" >/dev/null 2>&1; }

start_munge() {
  if [ ! -s /etc/munge/munge.key ]; then
    log "creating /etc/munge/munge.key"
    mkdir -p /etc/munge
    dd if=/dev/urandom of=/etc/munge/munge.key bs=1 count=1024 status=none
  fi
  chown munge:munge /etc/munge /etc/munge/munge.key
  chmod 0700 /etc/munge
  chmod 0400 /etc/munge/munge.key
  if munge_ok; then
    log "munged already running"
    return
  fi
  mkdir -p /run/munge /var/lib/munge /var/log/munge
  chown munge:munge /run/munge /var/lib/munge /var/log/munge
  chmod 0755 /run/munge
  rm -f "$MUNGE_SOCKET" "$MUNGE_SOCKET.lock"
  mkdir -p "$DIR/munge"
  chown munge:munge "$DIR/munge"
  # munged daemonizes and writes its pid file; it runs as the munge user like the packaged service.
  runuser -u munge -- munged --socket="$MUNGE_SOCKET" --pid-file="$DIR/munge/munged.pid" \
    --log-file="$DIR/munge/munged.log"
  for _ in $(seq 1 50); do
    munge_ok && return
    sleep 0.1
  done
  die "munged did not start (log: $DIR/munge/munged.log)"
}

write_conf() {
  local host cpus mem
  host=$(hostname -s)
  cpus=$(nproc)
  # Leave some memory to the system; submitit asks for mem_gb per job.
  mem=$(awk '/MemTotal/ {printf "%d", $2 / 1024 * 0.9}' /proc/meminfo)
  mkdir -p "$DIR/state" "$DIR/spool"
  cat >"$CONF" <<EOF
# Written by scripts/slurm-cluster.sh: a single-node cluster on 127.0.0.1, no cgroups.
ClusterName=cellgym
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$MUNGE_SOCKET
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
ReturnToService=2
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd.pid
SlurmctldLogFile=$DIR/slurmctld.log
SlurmdLogFile=$DIR/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
KillWait=5
MinJobAge=3600
Waittime=0
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=$PARTITION Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
EOF
}

node_state() { SLURM_CONF=$CONF sinfo -h -N -o '%T' 2>/dev/null | head -1 || true; }

do_start() {
  need_root start
  have_slurm || die "start: slurm-wlm/munge not installed (scripts/slurm-cluster.sh install)"
  mkdir -p "$DIR"
  if [ -n "$(pid_of "$DIR/slurmctld.pid")" ] && [ -n "$(pid_of "$DIR/slurmd.pid")" ] &&
    [ "$(node_state)" = idle ]; then
    log "already running ($CONF)"
    return
  fi
  do_stop_daemons
  write_conf
  mkdir -p "$DIR/bin"
  ln -sf "$(cd "$(dirname "$0")" && pwd)/slurm-sacct.sh" "$DIR/bin/sacct"
  start_munge
  # -i: ignore a stale state from an earlier cluster in the same directory.
  SLURM_CONF=$CONF slurmctld -i -f "$CONF"
  SLURM_CONF=$CONF slurmd -f "$CONF" -N "$(hostname -s)"
  local state=""
  for _ in $(seq 1 $((WAIT_S * 2))); do
    state=$(node_state)
    [ "$state" = idle ] && break
    sleep 0.5
  done
  if [ "$state" != idle ]; then
    log "node state after ${WAIT_S}s: '${state:-none}'"
    tail -20 "$DIR/slurmctld.log" "$DIR/slurmd.log" >&2 || true
    die "the node did not become idle"
  fi
  log "running: SLURM_CONF=$CONF, partition $PARTITION, node $(hostname -s) idle"
}

# Stop slurmd and slurmctld (and munged when this script started it), by their pid files.
do_stop_daemons() {
  local name pid
  for name in slurmd slurmctld munge/munged; do
    pid=$(pid_of "$DIR/$name.pid")
    [ -n "$pid" ] || continue
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then
      log "$name ($pid) still running: SIGKILL"
      kill -9 "$pid" 2>/dev/null || true
    fi
    rm -f "$DIR/$name.pid"
  done
}

do_stop() {
  [ -d "$DIR" ] || { log "nothing to stop ($DIR absent)"; return; }
  # Jobs still running would outlive slurmd (their slurmstepd) otherwise.
  if [ -n "$(pid_of "$DIR/slurmctld.pid")" ]; then
    SLURM_CONF=$CONF scancel --full -u "$(id -un)" 2>/dev/null || true
  fi
  do_stop_daemons
  log "stopped"
}

do_status() {
  local name pid rc=0
  for name in munge/munged slurmctld slurmd; do
    pid=$(pid_of "$DIR/$name.pid")
    if [ -n "$pid" ]; then echo "${name#*/}: running ($pid)"; else echo "${name#*/}: stopped"; rc=1; fi
  done
  if [ $rc -eq 0 ] || [ -n "$(pid_of "$DIR/slurmctld.pid")" ]; then
    SLURM_CONF=$CONF sinfo -N -l || rc=1
  fi
  return $rc
}

case "${1:-}" in
  install) do_install ;;
  start) do_start ;;
  stop) do_stop ;;
  status) do_status ;;
  env)
    echo "export SLURM_CONF=$CONF"
    echo "export PATH=$DIR/bin:\$PATH"
    ;;
  *)
    echo "usage: $0 install|start|stop|status|env" >&2
    exit 2
    ;;
esac
