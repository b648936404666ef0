# Shared set-up for scripts/run and scripts/test: installs what a fresh Debian 12 machine lacks.
# Sourced, not executed. Every step is idempotent and quiet when there is nothing to do.

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
VENV=$ROOT/.venv
# Debian's interpreter, not whatever a version manager puts first on PATH: the venv must be
# the same on every machine.
SYS_PYTHON=/usr/bin/python3

say() { printf '[%s] %s\n' "$(basename "$0")" "$*" >&2; }

apt_install() { # apt_install PACKAGE... (only the missing ones)
  local need=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || need+=("$p")
  done
  [ ${#need[@]} -eq 0 ] && return 0
  say "installing ${need[*]}"
  local made_policy=0
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d; chmod +x /usr/sbin/policy-rc.d; made_policy=1
  fi
  if [ -z "${APT_UPDATED:-}" ]; then apt-get -o DPkg::Lock::Timeout=900 update -qq; APT_UPDATED=1; fi
  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=900 install -y -qq --no-install-recommends "${need[@]}" >/dev/null
  [ $made_policy = 1 ] && rm -f /usr/sbin/policy-rc.d
  return 0
}

ensure_venv() {
  apt_install python3 python3-venv python3-pip ca-certificates git
  local stamp=$VENV/.installed-from
  local want; want=$(cat "$ROOT/pyproject.toml" "$ROOT/constraints.txt" | sha256sum | cut -d' ' -f1)
  if [ ! -x "$VENV/bin/python" ]; then
    say "creating the virtualenv in .venv"
    "$SYS_PYTHON" -m venv "$VENV"
  fi
  if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    say "installing Python dependencies"
    "$VENV/bin/pip" install -q --upgrade pip
    "$VENV/bin/pip" install -q -c "$ROOT/constraints.txt" -e "$ROOT[dev]"
    echo "$want" >"$stamp"
  fi
}

ensure_postgres() { # a running PostgreSQL on 127.0.0.1:5432 with a postgres/postgres login
  if ! command -v pg_ctlcluster >/dev/null || [ -z "$(ls /etc/postgresql 2>/dev/null)" ]; then
    apt_install postgresql
  fi
  local version; version=$(ls /etc/postgresql | sort -V | tail -1)
  if ! pg_isready -q -h 127.0.0.1 -p 5432; then
    say "starting PostgreSQL $version"
    pg_ctlcluster --skip-systemctl-redirect "$version" main start
    local deadline=$((SECONDS + 30))
    until pg_isready -q -h 127.0.0.1 -p 5432; do
      [ $SECONDS -lt $deadline ] || { say "PostgreSQL did not start"; return 1; }
      sleep 0.5
    done
  fi
  # Works whether the server trusts local TCP logins or asks for a password.
  runuser -u postgres -- psql -q -c "ALTER USER postgres PASSWORD 'postgres'" >/dev/null
}

ensure_chromium() { apt_install chromium fonts-dejavu-core; }

# Single sign-on tests (ADR 0028): the OpenID provider oidc-provider, locked by
# tests/idp/package-lock.json and installed with npm into IDP_DIR (reinstalled only when the
# lock changes; tests/idp_server.py checks the same), and Apache with mod_auth_openidc, which
# signs people in for the portal's trusted-header mode as Open OnDemand sites run it.
IDP_DIR=/var/lib/hpcportal-dev/idp
ensure_sso_test_services() {
  # Node 20 and its npm come with the machine; Debian's (node 18 with a separate npm) otherwise.
  command -v npm >/dev/null || apt_install nodejs npm
  apt_install apache2 libapache2-mod-auth-openidc
  mkdir -p "$IDP_DIR"
  if ! cmp -s "$ROOT/tests/idp/package-lock.json" "$IDP_DIR/package-lock.json" \
      || [ ! -d "$IDP_DIR/node_modules/oidc-provider" ]; then
    cp "$ROOT/tests/idp/package.json" "$ROOT/tests/idp/package-lock.json" "$IDP_DIR/"
    (cd "$IDP_DIR" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
  fi
}

# JupyterLab on the compute node of each version (`scripts/dev-cluster apps`), one version after
# another in a single background job, so the suite does not wait for it; the tests that need it
# wait through tests/dev_apps.py, which reads the same files: per version apps-V.log, then
# apps-V.ready, or apps-V.failed holding the exit status; apps.pid names the background job
# ("PID START-TIME VERSION...") while it runs.
APPS_STATE_DIR=/var/lib/hpcportal-dev

start_apps_installs() { # start_apps_installs VERSION...
  local v
  install -d -m 0700 "$APPS_STATE_DIR"
  for v in "$@"; do
    rm -f "$APPS_STATE_DIR/apps-$v.ready" "$APPS_STATE_DIR/apps-$v.failed"
    : >"$APPS_STATE_DIR/apps-$v.log"
  done
  (
    for v in "$@"; do
      rc=0
      "$ROOT/scripts/dev-cluster" apps --version "$v" >"$APPS_STATE_DIR/apps-$v.log" 2>&1 || rc=$?
      if [ $rc = 0 ]; then
        touch "$APPS_STATE_DIR/apps-$v.ready"
      else
        echo $rc >"$APPS_STATE_DIR/apps-$v.failed.new"
        mv "$APPS_STATE_DIR/apps-$v.failed.new" "$APPS_STATE_DIR/apps-$v.failed"
      fi
    done
  ) </dev/null >/dev/null 2>&1 &
  local pid=$! stat
  # The start time (field 22 of /proc/PID/stat) tells this job from a later process that
  # happens to get the same pid.
  stat=$(cat "/proc/$pid/stat" 2>/dev/null) || stat=""
  read -r -a stat <<<"${stat##*) }"
  echo "$pid ${stat[19]:-0} $*" >"$APPS_STATE_DIR/apps.pid"
  say "installing JupyterLab on the compute nodes ($*) in the background: $APPS_STATE_DIR/apps-VERSION.log"
}

# Removes what earlier test runs leave behind (job folders in the demo users' homes and scratch,
# the test databases), so a run proves the suite creates everything it relies on itself.
clear_test_state() { # clear_test_state DATABASE_URL
  local db; db=$(sed -E 's|.*/([^/?]+)(\?.*)?$|\1|' <<<"$1")
  say "removing earlier runs' job folders and test databases ($db, ${db}_*)"
  rm -rf /home/*/portal-* /scratch/*/portal-*
  local name
  for name in $(runuser -u postgres -- psql -At -c \
      "SELECT datname FROM pg_database WHERE datname = '$db' OR datname LIKE '${db}\\_%'"); do
    runuser -u postgres -- dropdb --force "$name"
  done
}

# OpenPBS and OpenLava for the PBS and LSF clusters (`scripts/dev-cluster build --scheduler
# pbs|lsf`): built once, cached, in the background while the Slurm clusters come up;
# wait_scheduler_build waits for one. The Debian packages each needs come first, in the
# foreground: apt takes a lock the other steps need too.
declare -A SCHEDULER_BUILD_PID=()

scheduler_build_log() { echo "/var/lib/hpcportal-dev/build-$1.log"; }

start_scheduler_build() { # start_scheduler_build pbs|lsf
  install -d -m 0700 /var/lib/hpcportal-dev
  "$ROOT/scripts/dev-cluster" build-deps --scheduler "$1"
  "$ROOT/scripts/dev-cluster" build --scheduler "$1" </dev/null >"$(scheduler_build_log "$1")" 2>&1 &
  SCHEDULER_BUILD_PID[$1]=$!
  say "building (or finding cached) $1 in the background: $(scheduler_build_log "$1")"
}

wait_scheduler_build() { # wait_scheduler_build pbs|lsf
  local pid=${SCHEDULER_BUILD_PID[$1]:-} started=$SECONDS log
  [ -n "$pid" ] || return 0
  log=$(scheduler_build_log "$1")
  if ! wait "$pid"; then
    cat "$log" >&2
    say "building $1 failed"
    return 1
  fi
  SCHEDULER_BUILD_PID[$1]=""
  say "$1 ready ($((SECONDS - started)) s waited for it): $(tail -1 "$log")"
}
