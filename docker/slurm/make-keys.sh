#!/bin/bash
# One-shot: create the cluster's shared secrets and the portal's keys, once.
#   /keys/cluster: munge.key, jwt_hs256.key, ssh host key, user CA public key, hpcsvc.pub
#   /keys/portal:  user_ca, hpcsvc_ed25519, jwt_hs256.key, known_hosts
set -euo pipefail
cluster=/keys/cluster
portal=/keys/portal
mkdir -p "$cluster" "$portal"
chmod 0700 "$portal"

[ -s "$cluster/munge.key" ] || dd if=/dev/urandom of="$cluster/munge.key" bs=1024 count=1 status=none
[ -s "$cluster/jwt_hs256.key" ] || dd if=/dev/urandom of="$cluster/jwt_hs256.key" bs=32 count=1 status=none
[ -s "$cluster/ssh_host_ed25519_key" ] || ssh-keygen -q -t ed25519 -N '' -f "$cluster/ssh_host_ed25519_key"
[ -s "$portal/user_ca" ] || ssh-keygen -q -t ed25519 -N '' -C portal-user-ca -f "$portal/user_ca"
[ -s "$portal/hpcsvc_ed25519" ] || ssh-keygen -q -t ed25519 -N '' -C hpcsvc -f "$portal/hpcsvc_ed25519"

cp "$portal/user_ca.pub" "$cluster/user_ca.pub"
cp "$portal/hpcsvc_ed25519.pub" "$cluster/hpcsvc.pub"
cp "$cluster/jwt_hs256.key" "$portal/jwt_hs256.key"
echo "slurmctld $(cut -d' ' -f1,2 "$cluster/ssh_host_ed25519_key.pub")" > "$portal/known_hosts"
# The portal image runs as uid 10001 and must read its own keys, nobody else.
chown -R 10001:10001 "$portal"
chmod 0600 "$portal"/*
echo "keys ready"
