#!/bin/bash
# Start one Slurm role in the foreground: slurmdbd | slurmctld | slurmd | slurmrestd.
set -euo pipefail
keys=/keys/cluster
role="${1:?usage: slurm-entrypoint slurmdbd|slurmctld|slurmd|slurmrestd}"

install -o munge -g munge -m 0400 "$keys/munge.key" /etc/munge/munge.key
# A fresh state volume arrives owned by root; slurmctld runs as slurm.
chown slurm:slurm /var/spool/slurmctld
install -o slurm -g slurm -m 0600 "$keys/jwt_hs256.key" /var/spool/slurmctld/jwt_hs256.key
runuser -u munge -- /usr/sbin/munged

ensure_accounts() {
    # Before slurmctld starts, so that it loads every association from slurmdbd at start-up:
    # slurmdbd's pushes to a controller that is not listening yet are lost. sacctmgr "add" of
    # an existing object exits 1, so look first.
    until sacctmgr -n show cluster >/dev/null 2>&1; do sleep 1; done
    cluster=$(sed -n 's/^ClusterName=//p' /etc/slurm/slurm.conf)
    [ -n "$(sacctmgr -n show cluster "$cluster" format=cluster)" ] || sacctmgr -i add cluster "$cluster"
    for pair in physics:alice physics:carol physics:hpcsvc chemistry:bob chemistry:dave; do
        account="${pair%%:*}" user="${pair##*:}"
        [ -n "$(sacctmgr -n show account "$account")" ] || sacctmgr -i add account "$account"
        [ -n "$(sacctmgr -n show user "$user")" ] \
            || sacctmgr -i add user "$user" Account="$account" DefaultAccount="$account"
    done
    sacctmgr -i modify user hpcsvc set AdminLevel=Operator >/dev/null || true
}

start_sshd() {
    mkdir -p /etc/ssh/keys /home/hpcsvc/.ssh
    install -m 0600 "$keys/ssh_host_ed25519_key" /etc/ssh/keys/ssh_host_ed25519_key
    install -m 0644 "$keys/user_ca.pub" /etc/ssh/portal_user_ca.pub
    install -o hpcsvc -g hpcsvc -m 0600 "$keys/hpcsvc.pub" /home/hpcsvc/.ssh/authorized_keys
    /usr/sbin/sshd
}

case "$role" in
    slurmdbd)
        install -o slurm -g slurm -m 0600 /etc/slurm/slurmdbd.conf.in /etc/slurm/slurmdbd.conf
        exec /usr/sbin/slurmdbd -D
        ;;
    slurmctld)
        start_sshd
        ensure_accounts >/dev/null
        exec /usr/sbin/slurmctld -D
        ;;
    slurmd)
        for user in alice bob carol dave hpcsvc; do
            install -d -o "$user" -g "$user" "/scratch/$user"
        done
        exec /usr/sbin/slurmd -D
        ;;
    slurmrestd)
        # slurmrestd refuses root and SlurmUser; run from / so jobs never inherit its cwd.
        cd /
        export SLURM_JWT=daemon
        # Docker's default seccomp profile refuses unshare() without CAP_SYS_ADMIN; the
        # container is already a namespace of its own.
        export SLURMRESTD_SECURITY=disable_unshare_sysv,disable_unshare_files
        exec runuser -u slurmrest -- /usr/sbin/slurmrestd -a rest_auth/jwt 0.0.0.0:6820
        ;;
    *)
        echo "unknown role: $role" >&2
        exit 2
        ;;
esac
