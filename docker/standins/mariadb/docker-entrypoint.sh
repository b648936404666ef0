#!/bin/bash
# First start: a data directory, the root password, then each init script, with networking off
# so nobody connects before that is done.
set -euo pipefail
datadir=/var/lib/mysql
chown mysql:mysql "$datadir" /run/mysqld
rm -f /run/mysqld/ready
if [ ! -d "$datadir/mysql" ]; then
    mariadb-install-db --user=mysql --datadir="$datadir" --skip-test-db >/dev/null
    mariadbd --user=mysql --datadir="$datadir" --skip-networking &
    pid=$!
    until mariadb -uroot -e 'SELECT 1' >/dev/null 2>&1; do sleep 0.5; done
    mariadb -uroot -e "ALTER USER 'root'@'localhost' IDENTIFIED BY '${MARIADB_ROOT_PASSWORD:?}'; \
        CREATE USER IF NOT EXISTS 'root'@'%' IDENTIFIED BY '${MARIADB_ROOT_PASSWORD}'; \
        GRANT ALL ON *.* TO 'root'@'%' WITH GRANT OPTION;"
    for script in /docker-entrypoint-initdb.d/*.sql; do
        [ -e "$script" ] && mariadb -uroot -p"$MARIADB_ROOT_PASSWORD" <"$script"
    done
    kill "$pid"
    wait "$pid" || true
fi
if [ "${1:-}" = mariadbd ]; then
    shift
    touch /run/mysqld/ready
    exec mariadbd --user=mysql --datadir="$datadir" --bind-address=0.0.0.0 "$@"
fi
exec "$@"
