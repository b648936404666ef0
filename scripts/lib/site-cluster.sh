# A multi-node Slurm cluster for scripts/dev-cluster --topology site: a login node and two
# compute nodes, each in its own network and UTS namespace on a private bridge, as at a site.
# Sourced by scripts/dev-cluster, not executed; it reuses that script's helpers.
# shellcheck shell=bash disable=SC2034
#
# Every node shares the host's filesystem (one mount namespace), so /home and /scratch are the
# same everywhere, and its programs (the host's Slurm for 22.05). What is the cluster's own lives
# under $SITE_DIR: configuration, munge key and socket, spool, logs, pid files and the login
# node's sshd host keys; Slurm finds its configuration through SLURM_CONF, which the login
# node's sshd gives every session, so the host's own cluster (/etc/slurm) is never touched.
#
#   host (portal)  10.77.N.1 on bridge <prefix>br0
#   <prefix>login  10.77.N.2    slurmctld, slurmdbd, slurmrestd :6820, sshd :22
#   <prefix>node1  10.77.N.129  slurmd (own memory cgroup)
#   <prefix>node2  10.77.N.130  slurmd (own memory cgroup)
#
# The namespaces have no default route: they reach only each other and the host's bridge
# address. Their names are in /etc/hosts (a block this script owns), so they resolve on the
# host and on every node. The compute nodes are 10.77.N.128/25: `isolate on` adds an
# unreachable route for it on the host, so the portal can reach them only through the login
# node (compute_access = "via_login").

SITE_ROOT=/var/lib/hpcportal-sites
SITE_CGROUP=hpcportal-sites
SITE_MEMORY_MB=3000        # each compute node's RealMemory; its cgroup allows a little more
SITE_CPUS=2

site_configure() { # site_configure VERSION
  case $1 in
    22.05) PREFIX=site; NET=0; CLUSTER=sitecluster ;;
    *) die "--topology site is built for 22.05 (the host's Slurm) so far, not $1" ;;
  esac
  SITE_ID=$1-site
  SITE_DIR=$SITE_ROOT/$SITE_ID
  CONF_DIR=$KEY_DIR/$SITE_ID
  SLURM_CONF_FILE=$SITE_DIR/etc/slurm.conf
  BRIDGE=${PREFIX}br0
  HOST_ADDR=10.77.$NET.1
  LOGIN=${PREFIX}login
  LOGIN_ADDR=10.77.$NET.2
  COMPUTE=("${PREFIX}node1" "${PREFIX}node2")
  COMPUTE_ADDRS=("10.77.$NET.129" "10.77.$NET.130")
  COMPUTE_NET=10.77.$NET.128/25
  MUNGE_SOCKET=$SITE_DIR/munge/munge.socket.2
  UTS_DIR=/run/hpcportal-uts
  SSH_PORT=22
  REST_PORT=6820
  DB_NAME=slurm_acct_db_$CLUSTER
}

site_nodes() { echo "$LOGIN" "${COMPUTE[@]}"; }
site_addr() { # site_addr NODE
  local i
  [ "$1" = "$LOGIN" ] && { echo "$LOGIN_ADDR"; return; }
  for i in "${!COMPUTE[@]}"; do [ "${COMPUTE[i]}" = "$1" ] && { echo "${COMPUTE_ADDRS[i]}"; return; }; done
  die "no node $1"
}

# Runs a program on a node: in its network and UTS namespaces, with the cluster's Slurm
# configuration and a clean environment.
node_argv() { # node_argv NODE: sets NODE_ARGV to the argv prefix that runs a program there
  NODE_ARGV=(nsenter --net="/run/netns/$1" --uts="$UTS_DIR/$1" --
    env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8
    HOME=/root SLURM_CONF="$SLURM_CONF_FILE")
}
on_node() { # on_node NODE CMD...
  node_argv "$1"; shift
  "${NODE_ARGV[@]}" "$@"
}
on_login() { on_node "$LOGIN" "$@"; }

# shellcheck source=scripts/lib/site-network.sh
. "$(dirname "${BASH_SOURCE[0]}")/site-network.sh"

# --- configuration ---------------------------------------------------------------------------

site_dirs_and_keys() {
  install -d -m 0755 "$SITE_ROOT" "$SITE_DIR" "$SITE_DIR/etc" "$SITE_DIR/ssh"
  install -d -o slurm -g slurm -m 0755 "$SITE_DIR/run" "$SITE_DIR/log" "$SITE_DIR/spool"
  install -d -o slurm -g slurm -m 0700 "$SITE_DIR/spool/ctld"
  install -d -o munge -g munge -m 0755 "$SITE_DIR/munge"
  local node
  for node in "${COMPUTE[@]}"; do install -d -m 0755 "$SITE_DIR/spool/d-$node"; done
  [ -s "$SITE_DIR/munge/munge.key" ] || dd if=/dev/urandom bs=1 count=1024 of="$SITE_DIR/munge/munge.key" 2>/dev/null
  chown munge:munge "$SITE_DIR/munge/munge.key"; chmod 0400 "$SITE_DIR/munge/munge.key"
  [ -s "$SITE_DIR/ssh/ssh_host_ed25519_key" ] ||
    ssh-keygen -q -t ed25519 -N '' -C "$LOGIN" -f "$SITE_DIR/ssh/ssh_host_ed25519_key"
  # The key every cluster of the dev world shares, so one portal token works on all.
  install -o slurm -g slurm -m 0600 "$KEY_DIR/jwt_hs256.key" "$SITE_DIR/spool/ctld/jwt_hs256.key"
}

site_node_lines() {
  local node i hw topo; hw=$(slurmd -C | head -1)
  topo=$(grep -o 'Boards=[0-9]* SocketsPerBoard=[0-9]* CoresPerSocket=[0-9]* ThreadsPerCore=[0-9]*' <<<"$hw")
  for i in "${!COMPUTE[@]}"; do
    node=${COMPUTE[i]}
    echo "NodeName=$node NodeAddr=${COMPUTE_ADDRS[i]} CPUs=$SITE_CPUS $topo RealMemory=$SITE_MEMORY_MB State=UNKNOWN"
  done
  local nodes; nodes=$(IFS=,; echo "${COMPUTE[*]}")
  echo "PartitionName=debug Nodes=$nodes Default=YES MaxTime=01:00:00 DefaultTime=00:10:00 State=UP"
  echo "PartitionName=long Nodes=$nodes Default=NO MaxTime=7-00:00:00 DefaultTime=01:00:00 State=UP"
}

# The single-node cluster's slurm.conf (render_slurm_conf), with this cluster's controller,
# paths and nodes in place of the host's.
render_site_slurm_conf() {
  render_slurm_conf | awk '!/^(SlurmctldHost|SlurmctldPidFile|SlurmdPidFile|StateSaveLocation|SlurmdSpoolDir|SlurmctldLogFile|SlurmdLogFile|AuthAltParameters|AccountingStorageHost|AccountingStoragePass|AccountingStorageTRES|GresTypes|NodeName|PartitionName)=/'
  cat <<EOF
SlurmctldHost=$LOGIN($LOGIN_ADDR)
AuthInfo=socket=$MUNGE_SOCKET
AuthAltParameters=jwt_key=$SITE_DIR/spool/ctld/jwt_hs256.key
SlurmctldPidFile=$SITE_DIR/run/slurmctld.pid
SlurmdPidFile=$SITE_DIR/run/slurmd-%n.pid
StateSaveLocation=$SITE_DIR/spool/ctld
SlurmdSpoolDir=$SITE_DIR/spool/d-%n
SlurmctldLogFile=$SITE_DIR/log/slurmctld.log
SlurmdLogFile=$SITE_DIR/log/slurmd-%n.log
AccountingStorageHost=$LOGIN_ADDR
# Slurm reaches slurmdbd with the munge socket named here, not AuthInfo's.
AccountingStoragePass=$MUNGE_SOCKET
EOF
  site_node_lines
}

site_write_configs() {
  local changed=1
  render_site_slurm_conf | write_if_changed "$SLURM_CONF_FILE" 0644 root:root || changed=0
  write_if_changed "$SITE_DIR/etc/slurmdbd.conf" 0600 slurm:slurm <<EOF || true
AuthType=auth/munge
AuthInfo=socket=$MUNGE_SOCKET
AuthAltTypes=auth/jwt
AuthAltParameters=jwt_key=$SITE_DIR/spool/ctld/jwt_hs256.key
DbdHost=$LOGIN
DbdAddr=$LOGIN_ADDR
DbdPort=$DBD_PORT
SlurmUser=slurm
PidFile=$SITE_DIR/run/slurmdbd.pid
LogFile=$SITE_DIR/log/slurmdbd.log
DebugLevel=info
StorageType=accounting_storage/mysql
StorageHost=localhost
StoragePort=$DB_PORT
StorageLoc=$DB_NAME
StorageUser=slurm
StoragePass=$DB_PASS
EOF
  site_write_sshd_conf
  return $((1 - changed))
}

site_write_sshd_conf() {
  local permit="" node i
  # Forwarding (the portal's "via_login" access) only to the compute nodes, by name or address.
  for i in "${!COMPUTE[@]}"; do permit+=" ${COMPUTE[i]}:* ${COMPUTE_ADDRS[i]}:*"; done
  write_if_changed "$SITE_DIR/ssh/sshd_config" 0600 root:root <<EOF && site_stop sshd || true
Port $SSH_PORT
ListenAddress $LOGIN_ADDR
PidFile $SITE_DIR/run/sshd.pid
HostKey $SITE_DIR/ssh/ssh_host_ed25519_key
TrustedUserCAKeys $KEY_DIR/user_ca.pub
AuthorizedKeysFile .ssh/authorized_keys
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin no
UsePAM no
X11Forwarding no
AllowTcpForwarding local
PermitOpen$permit
SetEnv SLURM_CONF=$SLURM_CONF_FILE
MaxSessions 64
MaxStartups 64:30:128
ClientAliveInterval 30
Subsystem sftp internal-sftp
EOF
}

site_write_clusters_file() {
  install -d -m 0700 "$CONF_DIR"
  printf '%s,%s %s\n' "$LOGIN" "$LOGIN_ADDR" "$(cut -d' ' -f1-2 "$SITE_DIR/ssh/ssh_host_ed25519_key.pub")" \
    | write_if_changed "$CONF_DIR/known_hosts" 0600 root:root || true
  write_if_changed "$CONF_DIR/clusters.toml" 0600 root:root <<EOF || true
# Written by scripts/dev-cluster --topology site: a login node and compute nodes.
[clusters.$CLUSTER]
transport = "ssh"
login_host = "$LOGIN"
login_port = $SSH_PORT
known_hosts = "$CONF_DIR/known_hosts"
user_ca_key = "$KEY_DIR/user_ca"
service_user = "$SERVICE_USER"
service_key = "$KEY_DIR/hpcsvc_ed25519"
rest_url = "http://$LOGIN:$REST_PORT"
jwt_key = "$KEY_DIR/jwt_hs256.key"
slurm_user = "slurm"
log_roots = ["/home", "/scratch"]
compute_access = "via_login"
EOF
}

# --- daemons ---------------------------------------------------------------------------------

site_pidfile() { # site_pidfile DAEMON
  case $1 in
    munged) echo "$SITE_DIR/munge/munged.pid" ;;
    slurmd-*) echo "$SITE_DIR/run/$1.pid" ;;
    slurmctld | slurmdbd | slurmrestd | sshd) echo "$SITE_DIR/run/$1.pid" ;;
    *) return 1 ;;
  esac
}
site_daemons() { echo munged slurmdbd slurmctld; printf 'slurmd-%s\n' "${COMPUTE[@]}"; echo slurmrestd sshd; }
site_program() { local d=${1%%-*}; echo "$d"; } # slurmd-NODE runs slurmd
site_up_daemon() { local f; f=$(site_pidfile "$1") && pid_of "$f" "$(site_program "$1")" >/dev/null; }

site_stop() { # site_stop DAEMON
  local f pid
  f=$(site_pidfile "$1") || die "unknown daemon $1 (one of $(site_daemons | tr '\n' ' '))"
  pid=$(pid_of "$f" "$(site_program "$1")") || return 0
  kill "$pid" 2>/dev/null || true
  local deadline=$((SECONDS + 30))
  while kill -0 "$pid" 2>/dev/null && [ $SECONDS -lt $deadline ]; do sleep 0.2; done
  kill -9 "$pid" 2>/dev/null || true
  rm -f "$f"
  log "stopped $1"
}

site_start_daemons() {
  site_up_daemon munged || runuser -u munge -- /usr/sbin/munged --socket="$MUNGE_SOCKET" \
    --key-file="$SITE_DIR/munge/munge.key" --pid-file="$(site_pidfile munged)" \
    --log-file="$SITE_DIR/munge/munged.log" --seed-file="$SITE_DIR/munge/munged.seed"
  wait_for 10 munged test -S "$MUNGE_SOCKET"
  start_mariadb
  in_env mariadb -e "CREATE DATABASE IF NOT EXISTS $DB_NAME;
    CREATE USER IF NOT EXISTS 'slurm'@'localhost' IDENTIFIED BY '$DB_PASS';
    GRANT ALL ON $DB_NAME.* TO 'slurm'@'localhost'; FLUSH PRIVILEGES;"
  site_up_daemon slurmdbd || on_login /usr/sbin/slurmdbd
  WAIT_LOG=$SITE_DIR/log/slurmdbd.log wait_for 30 slurmdbd on_login sacctmgr -n show cluster
  on_login sacctmgr -n -P show cluster format=cluster | grep -qx "$CLUSTER" ||
    on_login sacctmgr -i add cluster "$CLUSTER" >/dev/null
  site_up_daemon slurmctld || on_login /usr/sbin/slurmctld
  WAIT_LOG=$SITE_DIR/log/slurmctld.log wait_for 30 slurmctld on_login scontrol ping
  local node
  for node in "${COMPUTE[@]}"; do
    node_argv "$node"
    site_up_daemon "slurmd-$node" || in_cgroup "$node" "${NODE_ARGV[@]}" /usr/sbin/slurmd -N "$node"
  done
  for node in "${COMPUTE[@]}"; do
    # A node marked down while its slurmd kept running (the network between the nodes was cut
    # for a while) never registers again by itself: up means usable, so it is resumed.
    if on_login sinfo -h -n "$node" -o '%t' | grep -Eq '^(inval|drain|drng|down)'; then
      on_login scontrol update nodename="$node" state=resume 2>/dev/null || true
    fi
    wait_for 30 "node $node to become usable" site_node_usable "$node"
  done
  if ! site_up_daemon slurmrestd; then
    node_argv "$LOGIN"
    spawn "$SITE_DIR/log/slurmrestd.log" "$(site_pidfile slurmrestd)" "${NODE_ARGV[@]}" \
      env SLURM_JWT=daemon setpriv --reuid=slurmrest --regid=slurmrest --clear-groups \
      /usr/sbin/slurmrestd -a rest_auth/jwt "${REST_PLUGINS[@]}" "$LOGIN_ADDR:$REST_PORT"
  fi
  WAIT_LOG=$SITE_DIR/log/slurmrestd.log wait_for 20 slurmrestd \
    curl -s -o /dev/null "http://$LOGIN_ADDR:$REST_PORT/openapi/v3"
  site_up_daemon sshd || on_login /usr/sbin/sshd -f "$SITE_DIR/ssh/sshd_config" -E "$SITE_DIR/log/sshd.log"
  wait_for 10 sshd test -s "$(site_pidfile sshd)"
}

site_node_usable() { on_login sinfo -h -n "$1" -o '%t' | grep -Eq '^(idle|mix|alloc)$'; }

# Open MPI and mpi4py for the "MPI across nodes" template: the nodes run the host's programs.
site_packages() {
  apt_install_in_env openmpi-bin libopenmpi-dev python3-mpi4py
}

site_smoke_test() {
  [ "${SKIP_SMOKE:-0}" = 1 ] && return 0
  local id
  id=$(ssh -p "$SSH_PORT" -i "$KEY_DIR/hpcsvc_ed25519" -o BatchMode=yes \
        -o UserKnownHostsFile="$CONF_DIR/known_hosts" -o StrictHostKeyChecking=yes \
        "$SERVICE_USER@$LOGIN" sbatch --parsable --hold --job-name=dev-cluster-smoke \
        --output=/dev/null --wrap=true)
  wait_for 30 "job $id in accounting" site_accounting_state_is "$id" PENDING
  on_login scancel "$id"
  wait_for 30 "job $id cancelled in accounting" site_accounting_state_is "$id" CANCELLED
  log "smoke test: job $id submitted over ssh to $LOGIN, seen in accounting, CANCELLED"
}
site_accounting_state_is() { on_login sacct -n -X -P -j "$1" -o State 2>/dev/null | grep -q "^$2"; }

# --- commands --------------------------------------------------------------------------------

site_cmd_up() {
  local started=$SECONDS
  install_packages
  ensure_users
  [ -s "$KEY_DIR/jwt_hs256.key" ] ||
    die "$KEY_DIR/jwt_hs256.key missing: run 'scripts/dev-cluster up' (22.05) first, whose JWT key every cluster shares"
  ensure_shared_keys
  site_packages
  site_network_up
  site_hosts_file
  site_cgroups
  site_dirs_and_keys
  local changed=0 was_up=1 d
  site_write_configs && changed=1
  for d in $(site_daemons); do site_up_daemon "$d" || was_up=0; done
  site_start_daemons
  if [ $changed = 1 ]; then on_login scontrol reconfigure; fi
  IN_ENV=(on_login)
  ensure_accounting_tree
  site_write_clusters_file
  # A cluster found whole and unchanged has passed the smoke test already; `up` stays quick.
  if [ $was_up = 0 ] || [ $changed = 1 ]; then site_smoke_test; fi
  log "up in $((SECONDS - started)) s: cluster $CLUSTER, login $LOGIN ($LOGIN_ADDR, ssh :$SSH_PORT, slurmrestd :$REST_PORT), compute ${COMPUTE[*]}, config $CONF_DIR/clusters.toml"
}

site_cmd_down() {
  local d
  for d in sshd slurmrestd $(printf 'slurmd-%s ' "${COMPUTE[@]}") slurmctld slurmdbd munged; do site_stop "$d"; done
  site_end_node_processes
  if [ "${1:-}" = --wipe ]; then
    in_env mariadb -e "DROP DATABASE IF EXISTS $DB_NAME" || true
    rm -rf "$SITE_DIR"/spool/ctld/* "$SITE_DIR"/spool/d-* "$SITE_DIR"/log/*
  fi
  site_network_down
  site_hosts_file_remove
  local node
  for node in "${COMPUTE[@]}"; do rmdir "$(site_cgroup_of "$node")" 2>/dev/null || true; done
  rmdir "/sys/fs/cgroup/memory/$SITE_CGROUP/$CLUSTER" "/sys/fs/cgroup/memory/$SITE_CGROUP" 2>/dev/null || true
}

# Job steps outlive slurmd; whatever still runs in a node's namespace belongs to this cluster.
site_end_node_processes() {
  local node pids
  for node in $(site_nodes); do
    [ -e "/run/netns/$node" ] || continue
    pids=$(ip netns pids "$node" 2>/dev/null || true)
    # shellcheck disable=SC2086
    [ -z "$pids" ] || kill -9 $pids 2>/dev/null || true
  done
}

site_cmd_status() {
  local d ok=0
  for d in $(site_daemons); do
    if site_up_daemon "$d"; then echo "$d: up (pid $(pid_of "$(site_pidfile "$d")" "$(site_program "$d")"))"
    else echo "$d: down"; ok=1; fi
  done
  mariadb_reachable && echo "mariadbd: up" || { echo "mariadbd: down"; ok=1; }
  [ -s "$CONF_DIR/clusters.toml" ] && echo "config: $CONF_DIR/clusters.toml" || ok=1
  return $ok
}

site_cmd_clear_queue() {
  on_login squeue -h -o %F | sort -u | while read -r id; do on_login scancel "$id" 2>/dev/null || true; done
  wait_for 60 "an empty queue" site_queue_is_empty
  log "queue cleared"
}
site_queue_is_empty() { [ -z "$(on_login squeue -h -t PENDING,RUNNING,SUSPENDED,COMPLETING -o %i)" ]; }

# Runs CMD as root on the login node (or on NODE with --node NODE), with the caller's
# environment but the system's PATH and the cluster's SLURM_CONF; its exit status is CMD's.
site_cmd_exec() {
  [ ${#ARGS[@]} -gt 0 ] || usage
  local node=$LOGIN
  if [ "${ARGS[0]}" = --node ]; then node=${ARGS[1]}; ARGS=("${ARGS[@]:2}"); fi
  [ -e "/run/netns/$node" ] || die "no node $node: run scripts/dev-cluster up --topology site"
  exec nsenter --net="/run/netns/$node" --uts="$UTS_DIR/$node" -- \
    env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin SLURM_CONF="$SLURM_CONF_FILE" "${ARGS[@]}"
}
