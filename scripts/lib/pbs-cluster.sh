# A real OpenPBS cluster for scripts/dev-cluster --scheduler pbs: pbs_server (with its own
# PostgreSQL data service), pbs_sched, pbs_comm, pbs_mom and the login sshd, on one host
# "pbshead" in a network and UTS namespace of its own on a private bridge.
# Sourced by scripts/dev-cluster, not executed; it reuses that script's helpers.
# shellcheck shell=bash disable=SC2034
#
#   host (portal)  10.78.0.1 on bridge pbsbr0
#   pbshead        10.78.0.2   pbs_server :15001, pbs_sched, pbs_comm, pbs_mom, sshd :22
#
# PBS will not run on a host name that resolves to 127.0.0.0/8 ("Could not find any usable IP
# address for host"), hence a real address in a namespace. OpenPBS is built once from the
# tarball carried in shared/vendor (CI reaches no source host); the install is cached under
# $KEY_DIR/build/, keyed by the tarball's sha256 and this recipe's revision, so later runs only
# copy it into place and start it. The daemons run in a private mount namespace as well, so the
# data service's socket directory (/run/postgresql) and /var/tmp are not the host's.
#
# The cluster shares the host's filesystem, users and /home, as the Slurm clusters do; what is
# its own lives under $PBS_STATE (configuration, PBS_HOME, logs, sshd keys).

PBS_TARBALL=${PBS_TARBALL:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/../shared/vendor/openpbs-23.06.06.tar.gz}
# Bump when the build flags change: the cache key is the tarball's sha256 and this.
PBS_RECIPE=1
PBS_EXEC=/opt/hpcportal-pbs
PBS_STATE=/var/lib/hpcportal-pbs
PBS_CONF=$PBS_STATE/pbs.conf        # compiled into the commands (--with-pbs-conf-file)
PBS_HOME=$PBS_STATE/home
PBS_DB_USER=pbsdata
PBS_DB_UID=61995                    # fixed, outside the system range (MariaDB's uid is there)
PBS_DB_PORT=15007                   # not 5432: the portal's own PostgreSQL listens there
PBS_BUILD_PACKAGES=(gcc g++ make libtool autoconf automake libhwloc-dev libx11-dev libxt-dev
  libedit-dev libical-dev libncurses-dev perl postgresql-server-dev-all postgresql-contrib
  python3-dev tcl-dev tk-dev swig libexpat1-dev libxext-dev libxft-dev libssl-dev libcjson-dev
  openssh-server)

pbs_configure() {
  CLUSTER=pbscluster
  BRIDGE=pbsbr0
  HOST_ADDR=10.78.0.1
  LOGIN=pbshead
  LOGIN_ADDR=10.78.0.2
  NETNS=$LOGIN
  UTS_DIR=/run/hpcportal-uts
  SSH_PORT=22
  CONF_DIR=$KEY_DIR/pbs
  PBS_SSH=$PBS_STATE/ssh
  PBS_LOG=$PBS_STATE/log
}

# Runs a program on pbshead as root: its network and UTS namespaces, the host's filesystem.
# The PBS scripts (pbs_server, pbs_db_utility) read /etc/pbs.conf unless PBS_CONF_FILE says.
on_pbshead() {
  nsenter --net="/run/netns/$NETNS" --uts="$UTS_DIR/$NETNS" -- \
    env -i PATH="$PBS_EXEC/bin:$PBS_EXEC/sbin:/usr/sbin:/usr/bin:/sbin:/bin" LANG=C.UTF-8 HOME=/root \
    PBS_CONF_FILE="$PBS_CONF" "$@"
}

# shellcheck source=scripts/lib/site-network.sh
. "$(dirname "${BASH_SOURCE[0]}")/site-network.sh"

# --- build -----------------------------------------------------------------------------------

pbs_build_key() {
  [ -s "$PBS_TARBALL" ] || die "$PBS_TARBALL missing (OpenPBS 23.06 source, carried in shared/vendor)"
  echo "openpbs-$(sha256sum "$PBS_TARBALL" | cut -c1-16)-r$PBS_RECIPE"
}

# Debian's packages for the build; apt takes a lock, so scripts/test installs them before it
# starts the build in the background beside its other set-up.
pbs_build_deps() {
  [ -f "$KEY_DIR/build/$(pbs_build_key)/.complete" ] || apt_install_in_env "${PBS_BUILD_PACKAGES[@]}"
}

# Builds OpenPBS into $KEY_DIR/build/KEY/ unless it is there; prints how long it took.
pbs_build() {
  local key cache started=$SECONDS src
  key=$(pbs_build_key)
  cache=$KEY_DIR/build/$key
  if [ -f "$cache/.complete" ]; then return 0; fi
  pbs_build_deps
  log "building OpenPBS from $(basename "$PBS_TARBALL") (a few minutes, once; log $KEY_DIR/build/$key.log)"
  install -d -m 0755 "$KEY_DIR/build"
  src=$(mktemp -d "$KEY_DIR/build/src.XXXXXX")
  rm -rf "$PBS_EXEC" "$cache"
  if ! (
    set -e
    tar -xzf "$PBS_TARBALL" -C "$src" --strip-components=1
    cd "$src"
    ./autogen.sh
    # Debian's Python, never a version manager's first on PATH: the daemons embed it.
    ./configure --prefix="$PBS_EXEC" --with-pbs-conf-file="$PBS_CONF" --with-python=/usr
    nice -n 10 make -j"$(nproc)"
    # The init script and profile files go into the install, not /etc.
    make install sysprofiledir="$PBS_EXEC/etc/profile.d" unitfiledir="$PBS_EXEC/lib/systemd/system"
  ) >"$KEY_DIR/build/$key.log" 2>&1; then
    rm -rf "$src"
    die "building OpenPBS failed: see $KEY_DIR/build/$key.log"
  fi
  rm -rf "$src"
  cp -a "$PBS_EXEC" "$cache.partial"
  echo "$key" >"$cache.partial/.complete"
  mv "$cache.partial" "$cache"
  echo "$key" >"$PBS_EXEC/.build"
  log "built OpenPBS in $((SECONDS - started)) s, cached in $cache"
}

# The cached install in place at $PBS_EXEC.
pbs_install() {
  local key; key=$(pbs_build_key)
  if [ "$(cat "$PBS_EXEC/.build" 2>/dev/null)" != "$key" ]; then
    pbs_build
    if [ "$(cat "$PBS_EXEC/.build" 2>/dev/null)" != "$key" ]; then
      rm -rf "$PBS_EXEC"
      cp -a "$KEY_DIR/build/$key" "$PBS_EXEC"
      echo "$key" >"$PBS_EXEC/.build"
    fi
  fi
  # Set-uid root, as PBS's own packages install them (make install does not): a user's qsub
  # proves who it is to the server through pbs_iff's privileged port.
  chmod 4755 "$PBS_EXEC/sbin/pbs_iff" "$PBS_EXEC/sbin/pbs_rcp"
}

# --- network and configuration ---------------------------------------------------------------

pbs_network_up() {
  ip link show "$BRIDGE" >/dev/null 2>&1 || ip link add "$BRIDGE" type bridge
  [[ $(ip addr show dev "$BRIDGE") == *" $HOST_ADDR/24 "* ]] || ip addr add "$HOST_ADDR/24" dev "$BRIDGE"
  ip link set "$BRIDGE" up
  install -d -m 0755 "$UTS_DIR"
  site_node_namespaces "$NETNS" "$LOGIN_ADDR"
}

pbs_network_down() {
  ip link del "v-$NETNS" 2>/dev/null || true
  [ -e "/run/netns/$NETNS" ] && ip netns del "$NETNS"
  if mountpoint -q "$UTS_DIR/$NETNS"; then umount "$UTS_DIR/$NETNS"; fi
  rm -f "$UTS_DIR/$NETNS"
  ip link del "$BRIDGE" 2>/dev/null || true
}

pbs_ensure_db_user() {
  getent group "$PBS_DB_USER" >/dev/null || groupadd -g "$PBS_DB_UID" "$PBS_DB_USER"
  getent passwd "$PBS_DB_USER" >/dev/null ||
    useradd -u "$PBS_DB_UID" -g "$PBS_DB_USER" -m -d "/home/$PBS_DB_USER" -s /bin/bash "$PBS_DB_USER"
}

# What pbs_postinstall's create_home does, without its /etc/init.d and profile files.
pbs_create_home() {
  local mode dir
  install -d -m 0755 "$PBS_STATE" "$PBS_HOME" "$PBS_LOG" "$PBS_STATE/run/postgresql" "$PBS_STATE/tmp"
  chmod 1777 "$PBS_STATE/tmp"
  chown "$PBS_DB_USER:$PBS_DB_USER" "$PBS_STATE/run/postgresql"
  while read -r mode dir; do
    install -d -m "$mode" "$PBS_HOME/$dir"
  done <<EOF
0755 server_logs
1777 spool
0750 server_priv
0755 server_priv/accounting
0750 server_priv/jobs
0750 server_priv/users
0750 server_priv/hooks
0750 server_priv/hooks/tmp
0755 sched_logs
0750 sched_priv
0755 comm_logs
0755 aux
0700 checkpoint
0755 mom_logs
0751 mom_priv
0751 mom_priv/jobs
0750 mom_priv/hooks
0750 mom_priv/hooks/tmp
1777 undelivered
EOF
  local from to
  for from in dedicated:dedicated_time holidays:holidays resource_group:resource_group; do
    to=${from#*:}; from=${from%%:*}
    [ -f "$PBS_HOME/sched_priv/$to" ] || cp "$PBS_EXEC/etc/pbs_$from" "$PBS_HOME/sched_priv/$to"
  done
  [ -f "$PBS_HOME/sched_priv/sched_config" ] ||
    install -m 0644 "$PBS_EXEC/etc/pbs_sched_config" "$PBS_HOME/sched_priv/sched_config"
  [ -f "$PBS_HOME/pbs_environment" ] || printf 'TZ=UTC\nPATH=/bin:/usr/bin\n' | install -m 0644 /dev/stdin "$PBS_HOME/pbs_environment"
  printf '%s' "$PBS_DB_USER" | write_if_changed "$PBS_HOME/server_priv/db_user" 0600 root:root || true
}

pbs_write_configs() {
  write_if_changed "$PBS_CONF" 0644 root:root <<EOF || true
PBS_EXEC=$PBS_EXEC
PBS_HOME=$PBS_HOME
PBS_SERVER=$LOGIN
PBS_START_SERVER=1
PBS_START_SCHED=1
PBS_START_COMM=1
PBS_START_MOM=1
PBS_CORE_LIMIT=unlimited
PBS_SCP=/usr/bin/scp
PBS_DATA_SERVICE_PORT=$PBS_DB_PORT
PBS_TMPDIR=$PBS_STATE/tmp
EOF
  # $usecp: the job's output files are copied in place (one shared filesystem), never by scp.
  # $enforce mem: a job above its mem request is killed (Exit_status -27), as Slurm does.
  write_if_changed "$PBS_HOME/mom_priv/config" 0644 root:root <<EOF || true
\$clienthost $LOGIN
\$usecp *:/ /
\$enforce mem
\$min_check_poll 1
\$max_check_poll 2
EOF
  pbs_write_sshd_conf
}

pbs_write_sshd_conf() {
  install -d -m 0755 "$PBS_SSH"
  [ -s "$PBS_SSH/ssh_host_ed25519_key" ] ||
    ssh-keygen -q -t ed25519 -N '' -C "$LOGIN" -f "$PBS_SSH/ssh_host_ed25519_key"
  write_if_changed "$PBS_SSH/sshd_config" 0600 root:root <<EOF && pbs_stop_sshd || true
Port $SSH_PORT
ListenAddress $LOGIN_ADDR
PidFile $PBS_STATE/sshd.pid
HostKey $PBS_SSH/ssh_host_ed25519_key
TrustedUserCAKeys $KEY_DIR/user_ca.pub
AuthorizedKeysFile .ssh/authorized_keys
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin no
UsePAM no
X11Forwarding no
AllowTcpForwarding no
SetEnv PATH=$PBS_EXEC/bin:/usr/local/bin:/usr/bin:/bin
MaxSessions 64
MaxStartups 64:30:128
ClientAliveInterval 30
Subsystem sftp internal-sftp
EOF
}

pbs_write_clusters_file() {
  install -d -m 0700 "$CONF_DIR"
  printf '%s,%s %s\n' "$LOGIN" "$LOGIN_ADDR" "$(cut -d' ' -f1-2 "$PBS_SSH/ssh_host_ed25519_key.pub")" \
    | write_if_changed "$CONF_DIR/known_hosts" 0600 root:root || true
  write_if_changed "$CONF_DIR/clusters.toml" 0600 root:root <<EOF || true
# Written by scripts/dev-cluster --scheduler pbs: OpenPBS on pbshead.
[clusters.$CLUSTER]
scheduler = "pbs"
transport = "ssh"
login_host = "$LOGIN"
login_port = $SSH_PORT
known_hosts = "$CONF_DIR/known_hosts"
user_ca_key = "$KEY_DIR/user_ca"
service_user = "$SERVICE_USER"
service_key = "$KEY_DIR/hpcsvc_ed25519"
log_roots = ["/home", "/scratch"]
EOF
}

# --- daemons ---------------------------------------------------------------------------------

pbs_pid() { # pbs_pid NAME: the live pid of a PBS daemon (pbs_server, pbs_sched, pbs_comm, pbs_mom)
  local f program=$1
  case $1 in
    pbs_server) f=$PBS_HOME/server_priv/server.lock program=pbs_server.bin ;;
    pbs_sched) f=$PBS_HOME/sched_priv/sched.lock ;;
    pbs_comm) f=$PBS_HOME/server_priv/comm.lock ;;
    pbs_mom) f=$PBS_HOME/mom_priv/mom.lock ;;
    sshd) f=$PBS_STATE/sshd.pid ;;
    *) return 1 ;;
  esac
  pid_of "$f" "$program"
}
PBS_DAEMONS=(pbs_comm pbs_server pbs_sched pbs_mom sshd)

pbs_all_up() { local d; for d in "${PBS_DAEMONS[@]}"; do pbs_pid "$d" >/dev/null || return 1; done; }

pbs_start_daemons() {
  if ! { pbs_pid pbs_server && pbs_pid pbs_sched && pbs_pid pbs_comm && pbs_pid pbs_mom; } >/dev/null; then
    # A private mount namespace: the data service's socket directory and /var/tmp are the
    # cluster's own. Every daemon and job started from here stays in it.
    on_pbshead unshare --mount --propagation private -- sh -c '
      mount --bind "$1/run/postgresql" /run/postgresql && mount --bind "$1/tmp" /var/tmp &&
      exec "$2/libexec/pbs_init.d" start' sh "$PBS_STATE" "$PBS_EXEC" >>"$PBS_LOG/pbs_init.log" 2>&1 ||
      die "pbs_init.d start failed: see $PBS_LOG/pbs_init.log"
  fi
  wait_for 60 pbs_server on_pbshead qstat -B
  pbs_pid sshd >/dev/null || on_pbshead /usr/sbin/sshd -f "$PBS_SSH/sshd_config" -E "$PBS_LOG/sshd.log"
  wait_for 10 sshd pbs_pid sshd
}

pbs_stop_sshd() {
  local pid; pid=$(pbs_pid sshd) || return 0
  kill "$pid"; rm -f "$PBS_STATE/sshd.pid"
}

# The server's settings and queues; qmgr's create fails on an existing object, so look first.
pbs_configure_server() {
  on_pbshead qmgr -c "list node $LOGIN" >/dev/null 2>&1 || on_pbshead qmgr -c "create node $LOGIN" >/dev/null
  # qmgr prints "Max open servers" on every run; only its errors matter. No manager or
  # operator but root on pbshead (PBS's default when both lists are unset): a list left by an
  # interrupted test (tests/contract/test_pbs_contract.py makes bob a manager for a moment)
  # would let that user delete everyone's jobs.
  on_pbshead qmgr >/dev/null <<EOF
unset server managers
unset server operators
set server job_history_enable = True
set server job_history_duration = 01:00:00
set server scheduler_iteration = 1
set server flatuid = True
set server query_other_jobs = True
set server default_queue = workq
set queue workq resources_max.walltime = 01:00:00
set queue workq resources_default.walltime = 00:10:00
EOF
  on_pbshead qmgr -c "list queue gpu" >/dev/null 2>&1 || on_pbshead qmgr >/dev/null <<EOF
create queue gpu queue_type = execution
set queue gpu resources_max.walltime = 24:00:00
set queue gpu resources_default.walltime = 01:00:00
set queue gpu enabled = True
set queue gpu started = True
EOF
  on_pbshead qmgr -c "set sched scheduler_iteration = 1" 2>/dev/null || true
}

pbs_node_free() { on_pbshead pbsnodes "$LOGIN" | grep -q 'state = free'; }

pbs_smoke_test() {
  [ "${SKIP_SMOKE:-0}" = 1 ] && return 0
  local id
  id=$(ssh -i "$KEY_DIR/hpcsvc_ed25519" -o BatchMode=yes -o UserKnownHostsFile="$CONF_DIR/known_hosts" \
        -o StrictHostKeyChecking=yes "$SERVICE_USER@$LOGIN" qsub -f -h -N dev-cluster-smoke -o /dev/null -j oe -- /bin/true)
  on_pbshead qdel "$id"
  wait_for 30 "job $id finished in history" pbs_job_finished "$id"
  log "smoke test: job $id submitted over ssh to $LOGIN, deleted, found in the job history"
}
pbs_job_finished() { on_pbshead qstat -x -f "$1" | grep -q 'job_state = F'; }

# --- commands --------------------------------------------------------------------------------

pbs_cmd_up() {
  local started=$SECONDS build_s start_s
  [ -s "$KEY_DIR/user_ca.pub" ] ||
    die "$KEY_DIR/user_ca.pub missing: run 'scripts/dev-cluster up' (22.05) first, whose user CA every cluster shares"
  ensure_users
  ensure_shared_keys
  pbs_install
  build_s=$((SECONDS - started))
  pbs_ensure_db_user
  pbs_network_up
  site_hosts_block "$LOGIN_ADDR $LOGIN"
  pbs_create_home
  pbs_write_configs
  local was_up=0; pbs_all_up && was_up=1
  pbs_start_daemons
  pbs_configure_server
  wait_for 60 "node $LOGIN to be free" pbs_node_free
  pbs_write_clusters_file
  start_s=$((SECONDS - started - build_s))
  [ $was_up = 1 ] || pbs_smoke_test
  log "up: OpenPBS cluster $CLUSTER on $LOGIN ($LOGIN_ADDR, ssh :$SSH_PORT); install ${build_s} s, start ${start_s} s, config $CONF_DIR/clusters.toml"
}

pbs_cmd_down() {
  if [ -e "/run/netns/$NETNS" ] && [ -x "$PBS_EXEC/libexec/pbs_init.d" ]; then
    on_pbshead "$PBS_EXEC/libexec/pbs_init.d" stop >>"$PBS_LOG/pbs_init.log" 2>&1 || true
  fi
  pbs_stop_sshd
  # Whatever still runs in the namespace (jobs, the data service) belongs to this cluster.
  local pids
  if [ -e "/run/netns/$NETNS" ]; then
    pids=$(ip netns pids "$NETNS" 2>/dev/null || true)
    # shellcheck disable=SC2086
    [ -z "$pids" ] || kill -9 $pids 2>/dev/null || true
  fi
  pbs_network_down
  site_hosts_block ""
  if [ "${1:-}" = --wipe ]; then rm -rf "$PBS_STATE" "$CONF_DIR"; fi
  log "down: $CLUSTER"
}

pbs_cmd_status() {
  local d ok=0
  for d in "${PBS_DAEMONS[@]}"; do
    if pbs_pid "$d" >/dev/null; then echo "$d: up (pid $(pbs_pid "$d"))"
    else echo "$d: down"; ok=1; fi
  done
  [ -s "$CONF_DIR/clusters.toml" ] && echo "config: $CONF_DIR/clusters.toml" || ok=1
  return $ok
}

# Deletes every job (finished ones stay in the history).
pbs_cmd_clear_queue() {
  local ids
  ids=$(on_pbshead qstat -t -x | awk 'NR > 2 && $5 != "F" { print $1 }')
  # shellcheck disable=SC2086
  [ -z "$ids" ] || on_pbshead qdel -W force $ids 2>/dev/null || true
  wait_for 60 "an empty queue" pbs_queue_is_empty
  log "queue cleared"
}
pbs_queue_is_empty() { [ -z "$(on_pbshead qselect -s QHWRETB 2>/dev/null)" ]; }

pbs_cmd_exec() {
  [ ${#ARGS[@]} -gt 0 ] || usage
  [ -e "/run/netns/$NETNS" ] || die "the PBS cluster is not up: run scripts/dev-cluster up --scheduler pbs"
  on_pbshead "${ARGS[@]}"
}
