#!/usr/bin/env bash
# `sacct` for the single-node test cluster of scripts/slurm-cluster.sh, which has no accounting
# database (slurmdbd): answers submitit's status query
#   sacct -o JobID,State,NodeList --parsable2 -j <id>[,<id>...]
# from `scontrol show job` (slurmctld keeps finished jobs for MinJobAge seconds). Without it,
# submitit cannot learn that a job died without writing its result (killed, out of memory) and
# waits for it forever. `scripts/slurm-cluster.sh start` links it as $CELLGYM_SLURM_DIR/bin/sacct;
# `eval "$(scripts/slurm-cluster.sh env)"` puts that folder first on PATH.
set -euo pipefail

ids=""
while [ $# -gt 0 ]; do
  case "$1" in
    -j | --jobs) ids=$2; shift 2 ;;
    --jobs=*) ids=${1#--jobs=}; shift ;;
    *) shift ;;
  esac
done

echo "JobID|State|NodeList"
[ -n "$ids" ] || exit 0
for id in ${ids//,/ }; do
  # One line per job (or array task): JobId=.. ArrayJobId=.. ArrayTaskId=.. JobState=.. NodeList=..
  scontrol -o show job "$id" 2>/dev/null | awk '
    {
      job = ""; arr = ""; task = ""; state = ""; nodes = ""
      for (i = 1; i <= NF; i++) {
        split($i, kv, "=")
        if (kv[1] == "JobId") job = kv[2]
        else if (kv[1] == "ArrayJobId") arr = kv[2]
        else if (kv[1] == "ArrayTaskId") task = kv[2]
        else if (kv[1] == "JobState") state = kv[2]
        else if (kv[1] == "NodeList") nodes = kv[2]
      }
      if (nodes == "(null)") nodes = ""
      if (arr != "" && task != "") {
        sub(/%.*/, "", task)
        if (task ~ /[-,]/) job = arr "_[" task "]"; else job = arr "_" task
      }
      if (job != "") print job "|" state "|" nodes
    }'
done
