#!/usr/bin/env bash
# Brings up a local OpenStack (Keystone, Placement, Glance, Neutron ML2 without agents, Nova with
# the fake virt driver, Heat; MariaDB + RabbitMQ) on 127.0.0.1 for the Heat driver's integration
# tests. Idempotent: when the cloud already answers it returns at once; otherwise it stops what is
# left of an earlier run and starts from empty databases. Installs are cached by install.sh.
#
# Writes $STATE/openrc (admin credentials, mode 0600) and $STATE/ready; logs to $STATE/log/.
# Stop with teardown.sh. Environment: VNFM_OS_STATE (/var/tmp/vnfm-openstack),
# VNFM_OS_CACHE (/var/cache/vnfm-openstack).
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
CACHE="${VNFM_OS_CACHE:-/var/cache/vnfm-openstack}"
STATE="${VNFM_OS_STATE:-/var/tmp/vnfm-openstack}"
VENV="$CACHE/venv"
export VNFM_OS_STATE="$STATE" VNFM_OS_CACHE="$CACHE"
T0=$(date +%s)
step() { echo "[bringup +$(($(date +%s) - T0)) s] $*"; }

if [ -f "$STATE/ready" ] && [ -f "$STATE/openrc" ] && [ -x "$VENV/bin/python" ]; then
  # shellcheck disable=SC1091
  if (set -a; . "$STATE/openrc"; timeout 60 "$VENV/bin/python" "$HERE/cloud_setup.py" check) >/dev/null 2>&1; then
    step "local OpenStack already up ($STATE)"
    exit 0
  fi
fi
"$HERE/teardown.sh" --wipe >/dev/null

step "installing (cached in $CACHE)"
"$HERE/install.sh"
T_INSTALL=$(($(date +%s) - T0))

umask 077
mkdir -p "$STATE"/{log,pids,etc,lib,keystone,glance/images,glance/staging,glance/tasks,cinder/lock,cinder/coordination,nova/lock,neutron/lock,heat/lock,rabbitmq,mysql-run}
LOG="$STATE/log"
secret() { "$VENV/bin/python" -c 'import secrets; print(secrets.token_hex(16))'; }
DBPW=$(secret); PW=$(secret); ADMIN_PW=$(secret)
cp "$HERE/wsgi_wrap.py" "$STATE/lib/"

# --- configuration files: templates in etc/, paste files from the venv --------------------
# Substitutions in bash, not sed: the passwords must not appear on a command line (ps, /proc).
subst() {  # subst LINE SERVICE: the line with @SVC@, @STATE@, @DBPW@ and @PW@ filled in
  local l=$1
  l=${l//@SVC@/"$2"}; l=${l//@STATE@/"$STATE"}; l=${l//@DBPW@/"$DBPW"}; l=${l//@PW@/"$PW"}
  printf '%s\n' "$l"
}
render() {  # render TEMPLATE SERVICE > file
  local svc=$2 line inc
  while IFS= read -r line || [ -n "$line" ]; do
    case "$line" in
      @AUTHTOKEN:*@) while IFS= read -r inc || [ -n "$inc" ]; do subst "$inc" "$svc"; done <"$HERE/etc/authtoken.inc" ;;
      *) subst "$line" "$svc" ;;
    esac
  done <"$1"
}
for svc in keystone placement glance cinder neutron nova heat; do
  mkdir -p "$STATE/etc/$svc"
  if [ -d "$VENV/etc/$svc" ]; then cp -r "$VENV/etc/$svc/." "$STATE/etc/$svc/"; fi
done
render "$HERE/etc/keystone.conf" keystone >"$STATE/etc/keystone/keystone.conf"
render "$HERE/etc/placement.conf" placement >"$STATE/etc/placement/placement.conf"
render "$HERE/etc/glance-api.conf" glance >"$STATE/etc/glance/glance-api.conf"
render "$HERE/etc/neutron.conf" neutron >"$STATE/etc/neutron/neutron.conf"
render "$HERE/etc/nova.conf" nova >"$STATE/etc/nova/nova.conf"
render "$HERE/etc/heat.conf" heat >"$STATE/etc/heat/heat.conf"
render "$HERE/etc/cinder.conf" cinder >"$STATE/etc/cinder/cinder.conf"
for f in cinder/api-paste.ini neutron/api-paste.ini heat/api-paste.ini glance/glance-api-paste.ini nova/api-paste.ini; do
  [ -f "$STATE/etc/$f" ] || { echo "missing $VENV/etc/$f" >&2; exit 1; }
done

# --- process helpers -----------------------------------------------------------------------
start() {  # start NAME [ENV=VALUE...] -- COMMAND...   (own session, so teardown stops the group)
  local name=$1; shift
  local envs=()
  while [ "$1" != -- ]; do envs+=("$1"); shift; done; shift
  env "${envs[@]}" setsid "$@" >"$LOG/$name.log" 2>&1 </dev/null &
  echo $! >"$STATE/pids/$name"
}
wait_until() {  # wait_until SECONDS WHAT COMMAND...
  local deadline=$(($(date +%s) + $1)) what=$2; shift 2
  until "$@" >/dev/null 2>&1; do
    if [ "$(date +%s)" -ge "$deadline" ]; then echo "timed out waiting for $what" >&2; return 1; fi
    sleep 0.5
  done
}
http_up() { local c; c=$(curl -s -o /dev/null -m 5 -w '%{http_code}' "$1"); [ "$c" != 000 ] && [ "$c" -lt 500 ]; }
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
wsgi() {  # wsgi NAME PORT MODULE [ENV...]
  local name=$1 port=$2 module=$3; shift 3
  start "$name" PYTHONPATH="$STATE/lib" WSGI_MODULE="$module" WSGI_PROG="$name" "$@" -- \
    "$VENV/bin/gunicorn" -w 1 --threads 8 --timeout 300 --keep-alive 75 -b "127.0.0.1:$port" wsgi_wrap:application
}
B="$VENV/bin"

# --- MariaDB, RabbitMQ (loopback only) -----------------------------------------------------
step "starting MariaDB and RabbitMQ"
mariadb-install-db --datadir="$STATE/mysql" --user=root --auth-root-authentication-method=normal \
  >"$LOG/mariadb-install.log" 2>&1
start mariadb -- mariadbd --no-defaults --datadir="$STATE/mysql" --user=root --bind-address=127.0.0.1 \
  --port=3306 --socket="$STATE/mysql-run/mysql.sock" --max-connections=1000 \
  --innodb-buffer-pool-size=64M --skip-log-bin
start epmd -- epmd -address 127.0.0.1
start rabbitmq HOME="$STATE/rabbitmq" RABBITMQ_MNESIA_BASE="$STATE/rabbitmq/mnesia" \
  RABBITMQ_LOG_BASE="$STATE/rabbitmq/log" RABBITMQ_NODE_IP_ADDRESS=127.0.0.1 ERL_EPMD_ADDRESS=127.0.0.1 \
  RABBITMQ_NODENAME=rabbit@localhost \
  RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS="-kernel inet_dist_use_interface {127,0,0,1}" -- \
  /usr/lib/rabbitmq/bin/rabbitmq-server
wait_until 60 "MariaDB" test -S "$STATE/mysql-run/mysql.sock"
{
  echo "ALTER USER 'root'@'localhost' IDENTIFIED BY '$DBPW';"
  for db in keystone placement glance cinder neutron nova_api nova nova_cell0 heat; do
    echo "CREATE DATABASE $db CHARACTER SET utf8mb4;"
  done
} | mariadb --no-defaults --socket="$STATE/mysql-run/mysql.sock" -uroot
step "MariaDB ready"

# --- Keystone ------------------------------------------------------------------------------
KC=(--config-file "$STATE/etc/keystone/keystone.conf")
"$B/keystone-manage" "${KC[@]}" db_sync >"$LOG/keystone-manage.log" 2>&1
"$B/keystone-manage" "${KC[@]}" fernet_setup --keystone-user root --keystone-group root >>"$LOG/keystone-manage.log" 2>&1
"$B/keystone-manage" "${KC[@]}" credential_setup --keystone-user root --keystone-group root >>"$LOG/keystone-manage.log" 2>&1
OS_BOOTSTRAP_PASSWORD="$ADMIN_PW" "$B/keystone-manage" "${KC[@]}" bootstrap \
  --bootstrap-admin-url http://127.0.0.1:5000/v3/ --bootstrap-internal-url http://127.0.0.1:5000/v3/ \
  --bootstrap-public-url http://127.0.0.1:5000/v3/ --bootstrap-region-id RegionOne >>"$LOG/keystone-manage.log" 2>&1
wsgi keystone 5000 keystone.wsgi.api OS_KEYSTONE_CONFIG_DIR="$STATE/etc/keystone"
cat >"$STATE/openrc" <<RC
OS_AUTH_URL=http://127.0.0.1:5000/v3
OS_USERNAME=admin
OS_PASSWORD=$ADMIN_PW
OS_PROJECT_NAME=admin
OS_USER_DOMAIN_NAME=Default
OS_PROJECT_DOMAIN_NAME=Default
OS_REGION_NAME=RegionOne
OS_IDENTITY_API_VERSION=3
VNFM_OS_IMAGE=vnfm-ci-image
VNFM_OS_NETWORK=vnfm-ci-net
VNFM_OS_FLAVOR=m1.tiny
RC
wait_until 60 "Keystone" http_up http://127.0.0.1:5000/v3
step "Keystone up"

# --- identity objects and database schemas, in parallel ------------------------------------
(set -a; . "$STATE/openrc"; VNFM_OS_SERVICE_PASSWORD="$PW" "$B/python" "$HERE/cloud_setup.py" identity) \
  >"$LOG/setup-identity.log" 2>&1 &
P_ID=$!
NC=(--config-file "$STATE/etc/nova/nova.conf")
(
  "$B/nova-manage" "${NC[@]}" api_db sync
  "$B/nova-manage" "${NC[@]}" cell_v2 map_cell0
  "$B/nova-manage" "${NC[@]}" cell_v2 create_cell --name cell1 --verbose
  "$B/nova-manage" "${NC[@]}" db sync
) >"$LOG/db-nova.log" 2>&1 &
P_NOVA=$!
"$B/placement-manage" --config-file "$STATE/etc/placement/placement.conf" db sync >"$LOG/db-placement.log" 2>&1 &
P_PL=$!
"$B/glance-manage" --config-file "$STATE/etc/glance/glance-api.conf" db_sync >"$LOG/db-glance.log" 2>&1 &
P_GL=$!
"$B/neutron-db-manage" --config-file "$STATE/etc/neutron/neutron.conf" upgrade heads >"$LOG/db-neutron.log" 2>&1 &
P_NE=$!
"$B/heat-manage" --config-file "$STATE/etc/heat/heat.conf" db_sync >"$LOG/db-heat.log" 2>&1 &
P_HE=$!
"$B/cinder-manage" --config-file "$STATE/etc/cinder/cinder.conf" db sync >"$LOG/db-cinder.log" 2>&1 &
P_CI=$!
for p in $P_ID $P_NOVA $P_PL $P_GL $P_NE $P_HE $P_CI; do
  wait "$p" || { echo "a setup step failed (see $LOG/setup-identity.log and $LOG/db-*.log)" >&2; exit 1; }
done
step "identity objects and schemas ready"

# --- the other services --------------------------------------------------------------------
wsgi placement 8778 placement.wsgi.api OS_PLACEMENT_CONFIG_DIR="$STATE/etc/placement"
wsgi glance 9292 glance.wsgi.api OS_GLANCE_CONFIG_DIR="$STATE/etc/glance"
wsgi neutron 9696 neutron.wsgi.api WSGI_ARGS="--config-file $STATE/etc/neutron/neutron.conf"
wsgi nova-api 8774 nova.wsgi.osapi_compute OS_NOVA_CONFIG_DIR="$STATE/etc/nova"
wsgi heat-api 8004 heat.wsgi.api WSGI_ARGS="--config-file $STATE/etc/heat/heat.conf"
wsgi cinder-api 8776 cinder.wsgi.api WSGI_ARGS="--config-file $STATE/etc/cinder/cinder.conf"
wait_until 90 "RabbitMQ" port_open 5672
start nova-conductor -- "$B/nova-conductor" "${NC[@]}"
start nova-scheduler -- "$B/nova-scheduler" "${NC[@]}"
start nova-compute -- "$B/nova-compute" "${NC[@]}"
start heat-engine -- "$B/heat-engine" --config-file "$STATE/etc/heat/heat.conf"
start cinder-scheduler -- "$B/cinder-scheduler" --config-file "$STATE/etc/cinder/cinder.conf"
start cinder-volume -- "$B/cinder-volume" --config-file "$STATE/etc/cinder/cinder.conf"
for svc in 8778/placement 9292/glance 8776/cinder 9696/neutron 8774/nova-api 8004/heat-api; do
  wait_until 120 "${svc#*/}" http_up "http://127.0.0.1:${svc%/*}/"
done
step "APIs answer"
(set -a; . "$STATE/openrc"; "$B/python" "$HERE/cloud_setup.py" wait-compute) >"$LOG/setup-compute.log" 2>&1
"$B/nova-manage" "${NC[@]}" cell_v2 discover_hosts >>"$LOG/setup-compute.log" 2>&1
step "nova-compute registered"
(set -a; . "$STATE/openrc"; "$B/python" "$HERE/cloud_setup.py" resources) >"$LOG/setup-resources.log" 2>&1
date -u +%FT%TZ >"$STATE/ready"
step "local OpenStack ready (install ${T_INSTALL} s, total $(($(date +%s) - T0)) s); credentials in $STATE/openrc"
