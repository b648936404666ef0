# An LSF cluster for scripts/dev-cluster --scheduler lsf: OpenLava 2.2 (the GPL line LSF's
# commands descend from: bsub, bjobs, bkill, bstop/bresume, bhist) built from the tarball the
# project carries, on one host "lsfhead" in a network and UTS namespace of its own, with an sshd
# that trusts the portal's user CA, as the Slurm login nodes do.
# Sourced by scripts/dev-cluster, not executed; it reuses that script's helpers.
# shellcheck shell=bash disable=SC2034
#
#   host (portal)  10.79.0.1 on bridge lsfbr0
#   lsfhead        10.79.0.2   lim, res, sbatchd (which starts mbatchd), sshd :22
#
# The host shares its filesystem with the namespace, so /home and the demo users are the Slurm
# clusters' own. What is the cluster's own lives under $LSF_DIR (configuration, logs, mbatchd's
# work directory, sshd's keys and pid file); the install is built once and cached under
# $KEY_DIR/build, keyed by the tarball's sha256. The daemons write no pid files: they are found
# (and stopped) by pid among the namespace's processes, never by name across the machine.

LSF_TARBALL=${LSF_TARBALL:-$(cd "$(dirname "$0")/.." && pwd)/../shared/vendor/openlava-2.2.tar.gz}
LSF_DIR=/var/lib/hpcportal-sites/lsf
LSF_CLUSTER=lsfcluster
LSF_HOST=lsfhead
LSF_ADDR=10.79.0.2
LSF_ADMIN=openlava
# Private ports (LSF's defaults are 6878-6882 and OpenLava's 6322-6325).
LSF_PORTS=(16322 16323 16324 16325)
LSF_DAEMONS=(lim res sbatchd mbatchd)
# Two bugs GCC 12 and glibc bring out, fixed before the build:
# - bsub and sbatchd shorten a working directory under the user's home with an overlapping
#   strcpy, which glibc garbles ("$HOME/porttest_…" for "$HOME/portal-contract/test_…"), and
#   the job then runs in /tmp: memmove instead;
# - mbatchd reads the function numofhosts as a number (no parentheses), and dies of a null
#   pointer at start about every other time, depending on where the kernel loads it.
LSF_PATCHES=("$(dirname "${BASH_SOURCE[0]}")/openlava-2.2-overlapping-strcpy.patch"
  "$(dirname "${BASH_SOURCE[0]}")/openlava-2.2-numofhosts.patch")
LSF_BUILD_PACKAGES=(gcc make autoconf automake libtool bison flex patch libtirpc-dev libhwloc-dev
  libnuma-dev tcl-dev libncurses-dev)

lsf_configure() {
  # site-network.sh's names for this cluster's one node.
  CLUSTER=$LSF_CLUSTER
  BRIDGE=lsfbr0
  HOST_ADDR=10.79.0.1
  COMPUTE_NET=10.79.0.128/25
  UTS_DIR=/run/hpcportal-uts
  CONF_DIR=$KEY_DIR/lsf
  LSF_ENVDIR=$LSF_DIR/etc
  [ -s "$LSF_TARBALL" ] || die "$LSF_TARBALL missing (the OpenLava 2.2 sources)"
  # The cache key: the sources and the patches applied to them.
  LSF_SHA=$(cat "$LSF_TARBALL" "${LSF_PATCHES[@]}" | sha256sum | cut -d' ' -f1)
  LSF_BUILT=$KEY_DIR/build/openlava-2.2-${LSF_SHA:0:16}
  # Where the cluster sees the install: $KEY_DIR is root's alone (it holds the CA's key), so the
  # cached install is bind-mounted here for the users' commands.
  LSF_PREFIX=/opt/hpcportal-lsf
}
site_nodes() { echo "$LSF_HOST"; }
site_addr() { echo "$LSF_ADDR"; }

# shellcheck source=scripts/lib/site-network.sh
. "$(dirname "${BASH_SOURCE[0]}")/site-network.sh"

# Runs a program on lsfhead: in its namespaces, with the cluster's configuration and a clean
# environment.
on_lsf() {
  nsenter --net="/run/netns/$LSF_HOST" --uts="$UTS_DIR/$LSF_HOST" -- \
    env -i PATH="$LSF_PREFIX/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
    LANG=C.UTF-8 HOME=/root LSF_ENVDIR="$LSF_ENVDIR" "$@"
}

# --- build -----------------------------------------------------------------------------------

# Built once per tarball: the stamp is written last, so an interrupted build is done again.
# The lock lets scripts/test build in the background while `up` waits for it.
lsf_is_built() { [ "$(cat "$LSF_BUILT/.built-from" 2>/dev/null)" = "$LSF_SHA" ]; }

# The packages the build needs, unless the install is cached: scripts/test installs them before
# it starts the build in the background, so that build never waits on another apt-get's lock.
lsf_build_deps() { lsf_is_built || apt_install_in_env "${LSF_BUILD_PACKAGES[@]}"; }

lsf_build() {
  install -d -m 0755 "$KEY_DIR/build"
  exec 8>"$KEY_DIR/build/openlava.lock"
  flock 8
  if lsf_is_built; then exec 8>&-; return 0; fi
  local started=$SECONDS src
  apt_install_in_env "${LSF_BUILD_PACKAGES[@]}"
  log "building OpenLava 2.2 into $LSF_BUILT"
  rm -rf "$LSF_BUILT"
  src=$(mktemp -d)
  tar -xzf "$LSF_TARBALL" -C "$src" --strip-components=1
  local p
  for p in "${LSF_PATCHES[@]}"; do patch -s -d "$src" -p1 <"$p"; done
  # GCC 12 defaults to -fno-common, which OpenLava's shared globals need; the RPC headers and
  # library moved from glibc to libtirpc.
  (
    cd "$src"
    NOCONFIGURE=1 ./bootstrap.sh
    CPPFLAGS=-I/usr/include/tirpc LIBS=-ltirpc CFLAGS="-g -O2 -fcommon" \
      ./configure --prefix="$LSF_BUILT" --quiet
    nice -n 10 make -j2 --quiet
    make --quiet install
  ) >"$KEY_DIR/build/openlava-build.log" 2>&1 ||
    { rm -rf "$src"; die "building OpenLava failed: see $KEY_DIR/build/openlava-build.log"; }
  rm -rf "$src"
  echo "$LSF_SHA" >"$LSF_BUILT/.built-from"
  log "built OpenLava 2.2 in $((SECONDS - started)) s"
  exec 8>&-
}

# --- configuration ---------------------------------------------------------------------------

lsf_mount_install() {
  install -d -m 0755 "$LSF_PREFIX"
  if mountpoint -q "$LSF_PREFIX"; then
    [ "$(cat "$LSF_PREFIX/.built-from" 2>/dev/null)" = "$LSF_SHA" ] && return 0
    lsf_stop_daemons
    umount "$LSF_PREFIX"
  fi
  mount --bind -o ro "$LSF_BUILT" "$LSF_PREFIX"
  # Builds of other sources or patches are no longer used by anything.
  local old
  for old in "$KEY_DIR"/build/openlava-2.2-*; do
    [ "$old" = "$LSF_BUILT" ] || rm -rf "$old"
  done
}

lsf_dirs_and_keys() {
  getent passwd "$LSF_ADMIN" >/dev/null ||
    useradd -r -M -d /nonexistent -s /usr/sbin/nologin "$LSF_ADMIN"
  install -d -m 0755 "$LSF_DIR" "$LSF_ENVDIR" "$LSF_DIR/ssh" "$LSF_DIR/run"
  install -d -o "$LSF_ADMIN" -g "$LSF_ADMIN" -m 0755 "$LSF_DIR/log" "$LSF_DIR/work" \
    "$LSF_DIR/work/logdir"
  [ -s "$LSF_DIR/ssh/ssh_host_ed25519_key" ] ||
    ssh-keygen -q -t ed25519 -N '' -C "$LSF_HOST" -f "$LSF_DIR/ssh/ssh_host_ed25519_key"
}

lsf_write_configs() { # sets LSF_CHANGED=1 when a file changed
  lsf_write lsf.conf <<EOF
LSF_SERVERDIR=$LSF_PREFIX/sbin
LSF_BINDIR=$LSF_PREFIX/bin
LSF_LIBDIR=$LSF_PREFIX/lib
LSF_ENVDIR=$LSF_ENVDIR
LSF_CONFDIR=$LSF_ENVDIR
LSB_CONFDIR=$LSF_ENVDIR
LSB_SHAREDIR=$LSF_DIR/work
LSF_LOGDIR=$LSF_DIR/log
LSF_LOG_MASK=LOG_WARNING
LSF_LIM_PORT=${LSF_PORTS[0]}
LSF_RES_PORT=${LSF_PORTS[1]}
LSB_MBD_PORT=${LSF_PORTS[2]}
LSB_SBD_PORT=${LSF_PORTS[3]}
LSF_AUTH=eauth
LSB_MAILTO=!U
LSB_MAILPROG=/bin/true
# sbatchd kills a job whose processes use more memory than its -M (otherwise -M is only an
# rlimit Linux ignores).
LSB_MEMLIMIT_ENFORCE=y
EOF
  lsf_write lsf.shared <<EOF
Begin Cluster
ClusterName
$LSF_CLUSTER
End Cluster

Begin HostType
TYPENAME
linux
End HostType

Begin HostModel
MODELNAME  CPUFACTOR   ARCHITECTURE
generic    100         (x86_64)
End HostModel

Begin Resource
RESOURCENAME  TYPE    INTERVAL INCREASING  DESCRIPTION
   cs         Boolean ()       ()          (Compute server)
End Resource
EOF
  lsf_write "lsf.cluster.$LSF_CLUSTER" <<EOF
Begin ClusterAdmins
Administrators = $LSF_ADMIN
End ClusterAdmins

Begin Host
HOSTNAME   model    type   server  r1m  RESOURCES
$LSF_HOST  generic  linux  1       -    (cs)
End Host
EOF
  # Short sleep times: a job is dispatched, and its end noticed, within seconds (the defaults
  # are a minute and half a minute). Ended jobs stay in bjobs -a for CLEAN_PERIOD seconds.
  lsf_write lsb.params <<'EOF'
Begin Parameters
DEFAULT_QUEUE = normal
MBD_SLEEP_TIME = 2
SBD_SLEEP_TIME = 2
JOB_ACCEPT_INTERVAL = 0
CLEAN_PERIOD = 600
MAX_JOB_ARRAY_SIZE = 1000
End Parameters
EOF
  # No "gpu" queue on purpose: a script written for another cluster's GPU queue is refused.
  lsf_write lsb.queues <<'EOF'
Begin Queue
QUEUE_NAME  = normal
PRIORITY    = 30
RUNLIMIT    = 1440
PROCLIMIT   = 2
DESCRIPTION = The default queue: up to a day
End Queue

Begin Queue
QUEUE_NAME  = short
PRIORITY    = 40
RUNLIMIT    = 60
PROCLIMIT   = 2
DESCRIPTION = Up to an hour, first in line
End Queue
EOF
  lsf_write lsb.hosts <<'EOF'
Begin Host
HOST_NAME  MXJ  JL/U  r1m  pg  ls  tmp  DISPATCH_WINDOW
default    !    ()    ()   ()  ()  ()   ()
End Host
EOF
  lsf_write lsb.users <<'EOF'
Begin User
USER_NAME  MAX_JOBS  JL/P
default    ()        ()
End User
EOF
  lsf_write_sshd_conf
}
# lsf_write NAME < content: one file of $LSF_ENVDIR; sets LSF_CHANGED when it changed.
lsf_write() { write_if_changed "$LSF_ENVDIR/$1" 0644 root:root && LSF_CHANGED=1 || true; }

lsf_write_sshd_conf() {
  write_if_changed "$LSF_DIR/ssh/sshd_config" 0600 root:root <<EOF && { lsf_stop_sshd; LSF_CHANGED=1; } || true
Port 22
ListenAddress $LSF_ADDR
PidFile $LSF_DIR/run/sshd.pid
HostKey $LSF_DIR/ssh/ssh_host_ed25519_key
TrustedUserCAKeys $KEY_DIR/user_ca.pub
AuthorizedKeysFile .ssh/authorized_keys
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin no
UsePAM no
X11Forwarding no
AllowTcpForwarding no
SetEnv LSF_ENVDIR=$LSF_ENVDIR PATH=$LSF_PREFIX/bin:/usr/local/bin:/usr/bin:/bin
MaxSessions 64
MaxStartups 64:30:128
ClientAliveInterval 30
Subsystem sftp internal-sftp
EOF
}

lsf_write_clusters_file() {
  install -d -m 0700 "$CONF_DIR"
  printf '%s,%s %s\n' "$LSF_HOST" "$LSF_ADDR" "$(cut -d' ' -f1-2 "$LSF_DIR/ssh/ssh_host_ed25519_key.pub")" \
    | write_if_changed "$CONF_DIR/known_hosts" 0600 root:root || true
  write_if_changed "$CONF_DIR/clusters.toml" 0600 root:root <<EOF || true
# Written by scripts/dev-cluster --scheduler lsf: OpenLava 2.2 on one host.
[clusters.$LSF_CLUSTER]
scheduler = "lsf"
transport = "ssh"
login_host = "$LSF_HOST"
login_port = 22
known_hosts = "$CONF_DIR/known_hosts"
user_ca_key = "$KEY_DIR/user_ca"
service_user = "$SERVICE_USER"
service_key = "$KEY_DIR/hpcsvc_ed25519"
slurm_user = "$LSF_ADMIN"
log_roots = ["/home", "/scratch"]
EOF
}

# --- daemons ---------------------------------------------------------------------------------

# The pids of one daemon's processes: those of lsfhead's namespace running that program (the
# first one started is the daemon; sbatchd forks one child per job).
lsf_pids() { # lsf_pids DAEMON
  local pid exe
  [ -e "/run/netns/$LSF_HOST" ] || return 0
  for pid in $(ip netns pids "$LSF_HOST" 2>/dev/null); do
    exe=$(readlink "/proc/$pid/exe" 2>/dev/null) || continue
    [ "$exe" = "$LSF_PREFIX/sbin/$1" ] && echo "$pid"
  done
  return 0
}
lsf_is_up() { [ -n "$(lsf_pids "$1")" ]; }
lsf_sshd_pid() { pid_of "$LSF_DIR/run/sshd.pid" sshd; }

lsf_stop_sshd() {
  local pid; pid=$(lsf_sshd_pid) || return 0
  kill "$pid" 2>/dev/null || true
  rm -f "$LSF_DIR/run/sshd.pid"
}

lsf_start_daemons() {
  local d
  # Every fd redirected: a daemon holding the caller's stdout would hang whoever reads it.
  for d in lim res sbatchd; do
    lsf_is_up "$d" || on_lsf "$LSF_PREFIX/sbin/$d" </dev/null >>"$LSF_DIR/log/$d.console" 2>&1
  done
  # sbatchd starts mbatchd on the master host once lim has elected it.
  wait_for 60 "the LSF host to be ok" lsf_host_ok
  lsf_sshd_pid >/dev/null || on_lsf /usr/sbin/sshd -f "$LSF_DIR/ssh/sshd_config" \
    -E "$LSF_DIR/log/sshd.log" </dev/null >/dev/null 2>&1
  wait_for 10 sshd lsf_sshd_pid
}
# bhosts and bjobs retry for ever while mbatchd is down: each asks within a deadline.
lsf_host_ok() { on_lsf timeout 5 bhosts -w "$LSF_HOST" 2>/dev/null | awk 'NR == 2 { exit !($2 == "ok") }'; }

lsf_stop_daemons() {
  local d pids
  lsf_stop_sshd
  for d in sbatchd mbatchd res lim; do
    pids=$(lsf_pids "$d")
    [ -z "$pids" ] && continue
    # shellcheck disable=SC2086 # one argument per pid
    kill $pids 2>/dev/null || true
    log "stopped $d ($(echo $pids))"
  done
  sleep 1
  # Jobs and whatever the daemons left behind: everything still in lsfhead's namespace.
  pids=$(ip netns pids "$LSF_HOST" 2>/dev/null || true)
  # shellcheck disable=SC2086
  [ -z "$pids" ] || kill -9 $pids 2>/dev/null || true
}

lsf_smoke_test() {
  [ "${SKIP_SMOKE:-0}" = 1 ] && return 0
  local id started=$SECONDS
  id=$(ssh -i "$KEY_DIR/hpcsvc_ed25519" -o BatchMode=yes -o UserKnownHostsFile="$CONF_DIR/known_hosts" \
        -o StrictHostKeyChecking=yes "$SERVICE_USER@$LSF_HOST" \
        'bsub -J dev-cluster-smoke -o /dev/null true' | sed -n 's/^Job <\([0-9]*\)>.*/\1/p')
  [ -n "$id" ] || die "smoke test: bsub over ssh gave no job id"
  wait_for 60 "job $id to end" lsf_job_done "$id"
  log "smoke test: job $id submitted over ssh, DONE in $((SECONDS - started)) s"
}
lsf_job_done() { on_lsf timeout 5 bjobs -a -w "$1" 2>/dev/null | awk 'NR == 2 { exit !($3 == "DONE") }'; }

# --- commands --------------------------------------------------------------------------------

lsf_cmd_up() {
  local started=$SECONDS
  ensure_users
  ensure_shared_keys
  lsf_build
  local built=$SECONDS
  site_network_up
  site_hosts_file
  lsf_mount_install
  lsf_dirs_and_keys
  LSF_CHANGED=0
  lsf_write_configs
  local was_up=1 d
  for d in lim res sbatchd mbatchd; do lsf_is_up "$d" || was_up=0; done
  lsf_start_daemons
  if [ $was_up = 1 ] && [ $LSF_CHANGED = 1 ]; then
    on_lsf lsadmin reconfig -f >/dev/null 2>&1 || true
    on_lsf badmin reconfig >/dev/null 2>&1 || true
    on_lsf badmin hrestart -f "$LSF_HOST" >/dev/null 2>&1 || true
  fi
  lsf_write_clusters_file
  if [ $was_up = 0 ] || [ $LSF_CHANGED = 1 ]; then lsf_smoke_test; fi
  log "up in $((SECONDS - started)) s ($((SECONDS - built)) s after the build): cluster $LSF_CLUSTER, $LSF_HOST ($LSF_ADDR, ssh :22), queues normal (default) and short, config $CONF_DIR/clusters.toml"
}

lsf_cmd_down() {
  lsf_stop_daemons
  if [ "${1:-}" = --wipe ]; then rm -rf "${LSF_DIR:?}"/work/* "${LSF_DIR:?}"/log/*; fi
  site_network_down
  site_hosts_file_remove
  if mountpoint -q "$LSF_PREFIX"; then umount "$LSF_PREFIX"; fi
}

lsf_cmd_status() {
  local d ok=0
  for d in "${LSF_DAEMONS[@]}"; do
    if lsf_is_up "$d"; then echo "$d: up (pid $(lsf_pids "$d" | head -1))"
    else echo "$d: down"; ok=1; fi
  done
  if lsf_sshd_pid >/dev/null; then echo "sshd: up (pid $(lsf_sshd_pid))"; else echo "sshd: down"; ok=1; fi
  [ -s "$CONF_DIR/clusters.toml" ] && echo "config: $CONF_DIR/clusters.toml" || ok=1
  return $ok
}

# Kills every unfinished job (as root, LSF's administrator's right: `bkill -u all 0`).
lsf_cmd_clear_queue() {
  on_lsf timeout 10 bkill -u all 0 >/dev/null 2>&1 || true
  wait_for 60 "an empty queue" lsf_queue_is_empty
  log "queue cleared"
}
lsf_queue_is_empty() { ! on_lsf timeout 5 bjobs -u all -w 2>/dev/null | grep -qE '^[0-9]+ +[^ ]+ +(PEND|RUN|PSUSP|USUSP|SSUSP)'; }

# Runs CMD as root on lsfhead, with the cluster's commands on PATH; its exit status is CMD's.
lsf_cmd_exec() {
  [ ${#ARGS[@]} -gt 0 ] || usage
  [ -e "/run/netns/$LSF_HOST" ] || die "no $LSF_HOST: run scripts/dev-cluster up --scheduler lsf"
  on_lsf "${ARGS[@]}"
  exit $?
}

lsf_main() { # lsf_main COMMAND
  lsf_configure
  case $1 in
    build-deps) lsf_build_deps ;;
    build) lsf_build ;;
    up) lsf_cmd_up ;;
    down) lsf_cmd_down "${ARGS[0]:-}" ;;
    status) lsf_cmd_status ;;
    clear-queue) lsf_cmd_clear_queue ;;
    exec) lsf_cmd_exec ;;
    *) usage ;;
  esac
}
