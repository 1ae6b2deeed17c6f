#!/bin/sh
# A 3-member etcd cluster on one machine, for trying orchctl on several "hosts" (docs/multi-host.md,
# "A 3-member etcd on one machine"). Loopback only, no TLS: not for real use across machines.
#
#   scripts/etcd-local-cluster.sh start DIR   # members' data and logs under DIR; waits until healthy
#   scripts/etcd-local-cluster.sh stop DIR    # stops the members started there (data kept)
#
# Client ports BASE, BASE+100, BASE+200; peer ports one above each (ORCHCTL_ETCD_PORT_BASE, default 2379:
# 2379/2380, 2479/2480, 2579/2580). Debian's own etcd.service (enabled by installing etcd-server)
# listens on 2379/2380: disable it first (`sudo systemctl disable --now etcd`) or set ORCHCTL_ETCD_PORT_BASE.
set -eu

cmd=${1:-}
dir=${2:-}
if [ -z "$cmd" ] || [ -z "$dir" ]; then
  echo "usage: $0 start|stop DIR" >&2
  exit 2
fi
base=${ORCHCTL_ETCD_PORT_BASE:-2379}
etcd=${ORCHCTL_ETCD_BIN:-etcd}
cluster=""
for i in 0 1 2; do
  c=$((base + 100 * i))
  cluster="${cluster:+$cluster,}m$i=http://127.0.0.1:$((c + 1))"
done

case "$cmd" in
start)
  mkdir -p "$dir"
  for i in 0 1 2; do
    c=$((base + 100 * i))
    if [ -f "$dir/m$i.pid" ] && kill -0 "$(cat "$dir/m$i.pid")" 2>/dev/null; then
      echo "member m$i already runs (pid $(cat "$dir/m$i.pid"))" >&2
      continue
    fi
    # --max-txn-ops/--max-request-bytes: one orchctl transaction writes every object of an apply
    # (docs/store.md). --auto-compaction-*: without it etcd keeps every revision until its quota fills.
    "$etcd" --name "m$i" --data-dir "$dir/m$i" \
      --listen-client-urls "http://127.0.0.1:$c" --advertise-client-urls "http://127.0.0.1:$c" \
      --listen-peer-urls "http://127.0.0.1:$((c + 1))" --initial-advertise-peer-urls "http://127.0.0.1:$((c + 1))" \
      --initial-cluster "$cluster" --initial-cluster-state new --initial-cluster-token orchctl-local \
      --max-txn-ops 10000 --max-request-bytes 10485760 --logger zap --log-outputs stderr \
      --auto-compaction-mode periodic --auto-compaction-retention 1h \
      >"$dir/m$i.log" 2>&1 &
    echo $! >"$dir/m$i.pid"
  done
  endpoints="127.0.0.1:$base,127.0.0.1:$((base + 100)),127.0.0.1:$((base + 200))"
  tries=0
  until ETCDCTL_API=3 etcdctl --endpoints "$endpoints" endpoint health >/dev/null 2>&1; do
    tries=$((tries + 1))
    if [ "$tries" -ge 60 ]; then
      echo "the members did not become healthy within 30 s; see $dir/m*.log" >&2
      exit 1
    fi
    sleep 0.5
  done
  echo "$endpoints"
  ;;
stop)
  for i in 0 1 2; do
    if [ -f "$dir/m$i.pid" ]; then
      pid=$(cat "$dir/m$i.pid")
      kill "$pid" 2>/dev/null || true
      # Until it has exited (at most 10 s), so a start right after finds its ports free.
      n=0
      while kill -0 "$pid" 2>/dev/null && [ "$n" -lt 20 ]; do
        sleep 0.5
        n=$((n + 1))
      done
      rm -f "$dir/m$i.pid"
    fi
  done
  ;;
*)
  echo "usage: $0 start|stop DIR" >&2
  exit 2
  ;;
esac
