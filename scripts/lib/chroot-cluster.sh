# Newer Slurm versions for scripts/dev-cluster, each in a chroot beside the host's 22.05 cluster.
# Sourced by scripts/dev-cluster, not executed; the settings made here are read there.
# shellcheck shell=bash disable=SC2034
#
# A version's root filesystem is a Debian suite built once with mmdebstrap under
# $KEY_DIR/rootfs/<version>. Its daemons share the host's network and pid namespaces, so each
# version has its own ports; everything else is its own: munge key and socket, MariaDB, spool,
# logs and sshd host keys. The demo users have the same names and ids as on the host, and /home
# and /scratch are the host's (bind mounts), so job output lands where the portal reads it.
# The portal's user CA, service key and JWT key are the host cluster's, so one set of
# credentials works on every cluster.

# Debian's slurmd, slurmctld and friends, plus what the daemons and this script run inside.
ROOTFS_PACKAGES=slurm-wlm,slurmctld,slurmd,slurmdbd,slurmrestd,slurm-client,slurm-wlm-jwt-plugin,munge,mariadb-server,openssh-server,curl,procps,iproute2,passwd
# What chroot_mount mounts, in mount order (relative to the root filesystem).
CHROOT_MOUNTS=(proc sys dev/pts dev/shm run home scratch)

chroot_configure() { # chroot_configure VERSION
  MMDEBSTRAP_OPTS=()
  case $1 in
    24.11)
      SUITE=trixie; CLUSTER=testcluster2411
      CTLD_PORT=7817; SLURMD_PORT=7818; DBD_PORT=7819; REST_PORT=7820; SSH_PORT=7222; DB_PORT=7306 ;;
    26.05)
      SUITE=sid; CLUSTER=testcluster2605
      CTLD_PORT=8817; SLURMD_PORT=8818; DBD_PORT=8819; REST_PORT=8820; SSH_PORT=8222; DB_PORT=8306
      # sid's Release file can read as expired against this machine's clock.
      MMDEBSTRAP_OPTS+=(--aptopt='Acquire::Check-Valid-Until "false"') ;;
    *) die "unknown version $1 (one of 22.05, 24.11, 26.05)" ;;
  esac
  R=$KEY_DIR/rootfs/$1
  # A clean environment: nothing of the caller's (virtualenvs, version managers) leaks into the
  # daemons.
  IN_ENV=(chroot "$R" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 HOME=/root)
  CONF_DIR=$KEY_DIR/$1
  SSHD_CONF=/etc/ssh/sshd_config_hpcportal
  CA_PUB=/etc/ssh/hpcportal_user_ca.pub
  # slurmd listens on its own port; the chroot's MariaDB is reached over TCP on its own port
  # too (sid's MariaDB moved its default socket to /run/mariadbd/, and TCP does not care).
  STORAGE_HOST=127.0.0.1
  DB_CLIENT_HOSTS=(localhost 127.0.0.1)
  # [client-server] points the chroot's own mariadb/mariadb-admin at this server.
  # innodb_snapshot_isolation (on by default since MariaDB 11.6, which trixie and sid ship) makes
  # concurrent writes fail with "Record has changed since last read"; slurmdbd 26.05 warns it
  # will then abort. "loose-" keeps an older server that lacks the option starting.
  MARIADB_EXTRA="loose-innodb_snapshot_isolation=OFF
[client-server]
port=$DB_PORT
socket=/run/mysqld/mysqld.sock
"
  # The 22.05 names (-s openapi/v0.0.38,...) make newer slurmrestd exit at start-up; without -s
  # it serves every API version it has.
  REST_PLUGINS=()
}

# Builds the root filesystem when it is missing. It is built beside its final place and moved
# there whole, so an interrupted build is never mistaken for a finished one.
ensure_rootfs() {
  [ -x "$R/usr/sbin/slurmctld" ] && return 0
  [ -e "$R" ] && die "$R exists but holds no Slurm: remove it (after 'down --version $VERSION') and retry"
  if ! command -v mmdebstrap >/dev/null; then
    log "installing mmdebstrap"
    apt-get -o DPkg::Lock::Timeout=900 update -qq
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=900 install -y -qq --no-install-recommends mmdebstrap >/dev/null
  fi
  local tmp=$R.partial
  # An interrupted mmdebstrap may leave its own mounts (proc, sys, dev) behind; never delete
  # through a mount.
  local left; left=$(mounts_under "$tmp")
  [ -z "$left" ] || die "$tmp still has mounts, unmount them first: $left"
  rm -rf "$tmp"
  install -d -m 0755 "$(dirname "$R")"
  log "building the Debian $SUITE root filesystem for Slurm $VERSION in $R"
  mmdebstrap --variant=apt --include="$ROOTFS_PACKAGES" "${MMDEBSTRAP_OPTS[@]}" \
    "$SUITE" "$tmp" http://deb.debian.org/debian
  # The chroot gets a devpts instance of its own; /dev/ptmx has to open that one, not the host's.
  ln -sf pts/ptmx "$tmp/dev/ptmx"
  install -d -m 0755 "$tmp/scratch"
  mv "$tmp" "$R"
}

mounts_under() { # mounts_under DIR: mount points at or below DIR
  awk -v d="$1" '$2 == d || index($2, d "/") == 1 { print $2 }' /proc/mounts
}

# sid moves on: a root filesystem built later may carry another Slurm than the one asked for.
check_slurm_version() {
  local v
  # shellcheck disable=SC2016 # ${Version} is dpkg-query's, not the shell's
  v=$(in_env dpkg-query -W -f='${Version}' slurmctld)
  [[ $v == "$VERSION".* ]] || die "$R has Slurm $v, not $VERSION"
}

mount_once() { # mount_once TARGET MOUNT-ARGS...
  local target=$1; shift
  mountpoint -q "$target" || mount "$@" "$target"
}

chroot_mount() {
  mount_once "$R/proc" -t proc proc
  mount_once "$R/sys" -t sysfs sysfs
  mount_once "$R/dev/pts" -t devpts -o newinstance,ptmxmode=0666,mode=0620,gid=5 devpts
  mount_once "$R/dev/shm" -t tmpfs -o mode=1777,nosuid,nodev tmpfs
  # /run is a tmpfs as on a booted system: pid files and sockets go away with `down`.
  mount_once "$R/run" -t tmpfs -o mode=0755,nosuid,nodev tmpfs
  install -d -m 1777 "$R/run/lock"
  mount_once "$R/home" --bind /home
  mount_once "$R/scratch" --bind /scratch
}

# The demo users with the host's names, uids and gids, so files in the shared /home and
# /scratch belong to the same people on both sides. slurmrest (slurmrestd's unprivileged user)
# needs no particular id.
chroot_users() {
  local entry user uid gid group
  for entry in "${DEMO_USERS[@]}"; do
    user=${entry%%:*}; uid=$(id -u "$user"); gid=$(id -g "$user"); group=$(id -gn "$user")
    grep -q "^$group:" "$R/etc/group" || in_env groupadd -g "$gid" "$group"
    grep -q "^$user:" "$R/etc/passwd" ||
      in_env useradd -M -u "$uid" -g "$gid" -d "/home/$user" -s /bin/bash "$user"
    # "!" (locked) makes sshd refuse even key and certificate logins; "*" only disables passwords.
    [ "$(awk -F: -v u="$user" '$1 == u { print $2 }' "$R/etc/shadow")" = '*' ] || in_env usermod -p '*' "$user"
  done
  grep -q '^slurmrest:' "$R/etc/passwd" || in_env useradd -r -M -d /nonexistent -s /usr/sbin/nologin slurmrest
}

chroot_prepare() {
  ensure_rootfs
  check_slurm_version
  # The host's users and the portal's keys come first: the chroot copies them.
  ensure_users
  ensure_shared_keys
  [ -s "$KEY_DIR/jwt_hs256.key" ] ||
    die "$KEY_DIR/jwt_hs256.key missing: run 'scripts/dev-cluster up' (22.05) first, whose JWT key every cluster shares"
  chroot_mount
  chroot_users
  # The node name resolves as on the host (the chroot shares its hostname).
  write_if_changed "$R/etc/hosts" 0644 root:root </etc/hosts || true
  ensure_daemon_dirs_and_keys
  # slurmctld and slurmdbd read the JWT key only when they start; it changes when the host
  # cluster was wiped and made a new one.
  if write_if_changed "$R/var/spool/slurmctld/jwt_hs256.key" 0600 slurm:slurm <"$KEY_DIR/jwt_hs256.key"; then
    stop_one slurmctld; stop_one slurmdbd
  fi
  write_if_changed "$R$CA_PUB" 0644 root:root <"$KEY_DIR/user_ca.pub" || true
}

# The certificate authorities the host's administrator added (a site's, an HTTPS proxy's) are
# trusted inside the chroot too, so what reaches PyPI from the host does from the chroot (pip in
# `scripts/dev-cluster apps`). Needs the chroot's ca-certificates package.
chroot_trust_host_cas() {
  local f changed=0
  while IFS= read -r -d '' f; do
    write_if_changed "$R$f" 0644 root:root <"$f" && changed=1
  done < <(find -L /usr/local/share/ca-certificates -type f -name '*.crt' -print0 2>/dev/null)
  [ $changed = 0 ] || in_env update-ca-certificates >/dev/null 2>&1 || die "update-ca-certificates failed in $R"
}

# slurmd from 24.11 on refuses to start when no cgroup filesystem is mounted unless the cgroup
# plugin is off (22.05 did not look); proctrack/linuxproc and task/none need no cgroups.
write_cgroup_conf() {
  echo "CgroupPlugin=disabled" | write_if_changed "$R/etc/slurm/cgroup.conf" 0644 root:root
}

# Processes still running in the chroot once its daemons are stopped: job steps (slurmstepd
# outlives slurmd) and ssh sessions. They belong to this cluster and would keep /home and
# /scratch busy.
chroot_processes() {
  # find complains (and fails) about processes that end while it looks; that is expected.
  { find /proc -mindepth 2 -maxdepth 2 -name root -lname "$R" 2>/dev/null || true; } | cut -d/ -f3
}

chroot_release() {
  local pids m i
  pids=$(chroot_processes)
  if [ -n "$pids" ]; then
    # shellcheck disable=SC2086
    kill $pids 2>/dev/null || true
    # slurmstepd ignores SIGTERM; a short grace period lets the rest end cleanly.
    local deadline=$((SECONDS + 3))
    while [ -n "$(chroot_processes)" ] && [ $SECONDS -lt $deadline ]; do sleep 0.2; done
    pids=$(chroot_processes)
    # shellcheck disable=SC2086
    [ -z "$pids" ] || kill -9 $pids 2>/dev/null || true
    log "ended the chroot's remaining processes"
  fi
  for ((i = ${#CHROOT_MOUNTS[@]} - 1; i >= 0; i--)); do
    m=$R/${CHROOT_MOUNTS[i]}
    if mountpoint -q "$m"; then umount "$m"; fi
  done
}

# Runs a command as root inside the chroot with the caller's environment (PATH aside) and
# stdin/stdout/stderr; its exit status is the command's. The working directory is the caller's
# when the chroot has the same path (/home/..., /scratch/..., /tmp), else /.
chroot_exec() {
  [ -x "$R/usr/bin/env" ] || die "no root filesystem for $VERSION: run scripts/dev-cluster up --version $VERSION"
  local dir=/
  [ -d "$R$PWD" ] && dir=$PWD
  exec chroot "$R" /usr/bin/env -C "$dir" PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$@"
}
