# The site cluster's network, names and memory cgroups (scripts/lib/site-cluster.sh): a bridge,
# a network and a UTS namespace per node, the nodes' block of /etc/hosts, the host's route to the
# compute nodes (cut by `isolate on`), and a memory cgroup per compute node.
# Sourced by site-cluster.sh, not executed; its settings come from site_configure.
# shellcheck shell=bash

# --- network ---------------------------------------------------------------------------------

site_network_up() {
  sysctl -qw net.ipv4.conf.all.forwarding=0 >/dev/null 2>&1 || true
  if ! ip link show "$BRIDGE" >/dev/null 2>&1; then
    ip link add "$BRIDGE" type bridge
  fi
  # Whole outputs compared, not piped into grep -q, which would end ip early (pipefail).
  [[ $(ip addr show dev "$BRIDGE") == *" $HOST_ADDR/24 "* ]] || ip addr add "$HOST_ADDR/24" dev "$BRIDGE"
  ip link set "$BRIDGE" up
  # A container engine on the same host (Docker) sets the FORWARD policy to DROP, and with
  # br_netfilter loaded that policy applies to frames between the nodes on this bridge: slurmctld
  # then loses its nodes. Traffic within the bridge is accepted explicitly.
  if command -v iptables >/dev/null 2>&1; then
    iptables -C FORWARD -i "$BRIDGE" -o "$BRIDGE" -j ACCEPT 2>/dev/null ||
      iptables -I FORWARD -i "$BRIDGE" -o "$BRIDGE" -j ACCEPT 2>/dev/null || true
  fi
  # A cut left behind (`isolate on` by a test that was killed) is mended: up means reachable.
  site_isolate off
  install -d -m 0755 "$UTS_DIR"
  local node
  for node in $(site_nodes); do site_node_namespaces "$node" "$(site_addr "$node")"; done
}

site_node_namespaces() { # site_node_namespaces NODE ADDRESS
  local node=$1 addr=$2 veth=v-$1
  [ -e "/run/netns/$node" ] || ip netns add "$node"
  if ! ip link show "$veth" >/dev/null 2>&1; then
    ip netns exec "$node" ip link del eth0 2>/dev/null || true
    ip link add "$veth" type veth peer name eth0 netns "$node"
  fi
  ip link set "$veth" master "$BRIDGE" up
  ip -n "$node" link set lo up
  [[ $(ip -n "$node" addr show dev eth0) == *" $addr/24 "* ]] || ip -n "$node" addr add "$addr/24" dev eth0
  ip -n "$node" link set eth0 up
  # A UTS namespace of its own gives the node its host name (jobs' `hostname`, MPI ranks).
  if ! mountpoint -q "$UTS_DIR/$node"; then
    : >"$UTS_DIR/$node"
    unshare --uts="$UTS_DIR/$node" hostname "$node"
  fi
}

site_network_down() {
  local node
  ip route del unreachable "$COMPUTE_NET" 2>/dev/null || true
  for node in $(site_nodes); do
    ip link del "v-$node" 2>/dev/null || true
    [ -e "/run/netns/$node" ] && ip netns del "$node"
    if mountpoint -q "$UTS_DIR/$node"; then umount "$UTS_DIR/$node"; fi
    rm -f "$UTS_DIR/$node"
  done
  ip link del "$BRIDGE" 2>/dev/null || true
}

# The nodes' names for the host and every namespace (they share /etc/hosts): one block,
# rewritten in place, so running `up` again changes nothing.
site_hosts_file() { site_hosts_block "$(for node in $(site_nodes); do printf '%s %s\n' "$(site_addr "$node")" "$node"; done)"; }
site_hosts_file_remove() { site_hosts_block ""; }

site_hosts_block() { # site_hosts_block LINES: this cluster's block of /etc/hosts (none if empty)
  local begin="# BEGIN hpcportal $CLUSTER" end="# END hpcportal $CLUSTER" tmp
  tmp=$(mktemp /etc/.hosts.XXXXXX)
  awk -v b="$begin" -v e="$end" '$0 == b { skip = 1 } !skip { print } $0 == e { skip = 0 }' /etc/hosts >"$tmp"
  [ -z "$1" ] || printf '%s\n%s\n%s\n' "$begin" "$1" "$end" >>"$tmp"
  if cmp -s "$tmp" /etc/hosts; then rm -f "$tmp"; return 0; fi
  chmod 0644 "$tmp"
  if mountpoint -q /etc/hosts; then
    # A bind-mounted /etc/hosts (containers) can only be written into.
    cat "$tmp" >/etc/hosts; rm -f "$tmp"
  else
    # Renamed into place, so a reader never sees it half written.
    mv -f "$tmp" /etc/hosts
  fi
}

# `isolate on`: the host (the portal) can no longer open connections to the compute nodes;
# the login node still can. `isolate off` undoes it.
site_isolate() {
  case ${1:-} in
    on) ip route replace unreachable "$COMPUTE_NET" ;;
    off) ip route del unreachable "$COMPUTE_NET" 2>/dev/null || true ;;
    *) die "usage: $0 isolate on|off --topology site" ;;
  esac
}

# --- cgroups ---------------------------------------------------------------------------------

# Each compute node's slurmd, its job steps and their jobs live in a memory cgroup of their own
# that holds the node to its RealMemory (and a margin for the daemons): a job on one node can
# never take another node's memory. Per-job limits stay Slurm's (OverMemoryKill).
site_cgroup_of() { echo "/sys/fs/cgroup/memory/$SITE_CGROUP/$CLUSTER/$1"; }

site_cgroups() {
  local node cg
  [ -d /sys/fs/cgroup/memory ] || { log "no cgroup v1 memory controller: nodes share the host's memory"; return 0; }
  for node in "${COMPUTE[@]}"; do
    cg=$(site_cgroup_of "$node")
    mkdir -p "$cg"
    echo $(((SITE_MEMORY_MB + 512) * 1024 * 1024)) >"$cg/memory.limit_in_bytes"
  done
}

in_cgroup() { # in_cgroup NODE CMD...: CMD (and what it forks) in the node's memory cgroup
  local cg; cg=$(site_cgroup_of "$1"); shift
  if [ -d "$cg" ]; then
    sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$cg" "$@"
  else
    "$@"
  fi
}
