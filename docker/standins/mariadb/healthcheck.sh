#!/bin/bash
# Healthy once the server started for real (not the first-start one) answers over its socket
# with InnoDB up: what --connect and --innodb_initialized check in the official image.
set -eu
[ -e /run/mysqld/ready ] || exit 1
mariadb -uroot -p"${MARIADB_ROOT_PASSWORD:-}" -N -e \
    "SELECT 1 FROM information_schema.ENGINES WHERE ENGINE='InnoDB' AND SUPPORT IN ('YES','DEFAULT')" \
    | grep -q 1
