# shellcheck shell=bash
# The Swarm engine: a second dockerd of its own, in swarm mode, next to the dev engine. Needs
# common.sh (paths, start_bg) and docker.sh (REGISTRY_ADDR, BASE_IMAGE, REGISTRY_IMAGE).
#
# Why a second engine: the dev engine runs with live-restore, which swarm mode refuses ("--live-
# restore daemon configuration is incompatible with swarm mode"), and the single-engine tests must
# keep theirs untouched. So this one has its own data-root, exec-root (hence its own containerd),
# pid file, unix socket and daemon.json (--config-file: /etc/docker/daemon.json is the dev
# engine's). Like the dev engine it is one per machine, shared by every checkout: its bridge,
# docker_gwbridge and the manager port 2377 are host-wide, so a second checkout (CI's fresh clone)
# must find and reuse it rather than start another. Hence fixed host paths, not .data/:
# /var/lib/hostctl-swarm (data, exec root, daemon.json, pid) and /run/hostctl-swarm/docker.sock.
# Its settings:
# - iptables false: a starting dockerd with iptables on flushes the DOCKER and DOCKER-ISOLATION
#   chains (libnetwork's bridge driver removes them before setting up its own), which would wipe
#   the dev engine's rules, tenant isolation included. Overlay networks do their filtering inside
#   their own namespaces; tasks reach each other by the overlay and the host reaches them by their
#   docker_gwbridge address. No NAT to the outside is wanted anyway.
# - bridge hctswarm0, a bridge this script makes: docker0 belongs to the dev engine, and "bridge":
#   "none" is no way out since dockerd then DELETES docker0 at start (removeDefaultBridgeInterface),
#   breaking every container and classic build of the dev engine on the default network until it
#   restarts. Swarm tasks use overlay networks; this bridge only keeps dockerd off docker0.
# - No default-address-pools: dockerd 20.10 with address pools and without live-restore deletes
#   the interface docker0 (hard-coded) whenever it restarts with a stored default bridge network,
#   i.e. the dev engine's bridge. docker_gwbridge takes a free 172.x range from Docker's built-in
#   pools; overlay subnets come from SWARM_ADDRESS_POOL at `swarm init`.
# - insecure-registries: the platform registry; nodes pull images built here from it. Loopback is
#   insecure by default already; a node in a network namespace reaches the registry by another
#   address, which SWARM_INSECURE_REGISTRIES adds.
# - no-new-privileges: the engine's API (1.41) has no field for it in a service spec, so the
#   daemon sets it on every container it runs, Swarm tasks included (docs/multi-host.md).
# - The manager listens on SWARM_ADVERTISE_ADDR (loopback unless a multi-node set-up asks
#   otherwise); services use endpoint_mode dnsrr since this kernel has no IPVS for virtual IPs.
#
# Environment: SWARM_ADVERTISE_ADDR (default 127.0.0.1), SWARM_INSECURE_REGISTRIES (comma-separated,
#              added to $REGISTRY_ADDR), SWARM_ADDRESS_POOL (default 10.224.0.0/12).

SWARM_DIR=/var/lib/hostctl-swarm
SWARM_SOCKET=/run/hostctl-swarm/docker.sock
SWARM_DOCKER_HOST="unix://$SWARM_SOCKET"
SWARM_ADVERTISE_ADDR=${SWARM_ADVERTISE_ADDR:-127.0.0.1}
SWARM_ADDRESS_POOL=${SWARM_ADDRESS_POOL:-10.224.0.0/12}
SWARM_BRIDGE=hctswarm0
SWARM_BRIDGE_ADDR=172.31.254.1/24

swarm_docker() { docker -H "$SWARM_DOCKER_HOST" "$@"; }
swarm_engine_up() { swarm_docker info >/dev/null 2>&1; }

# swarm_daemon_config: the engine's daemon.json (rewritten each time: it is ours alone).
swarm_daemon_config() {
  local registries="\"$REGISTRY_ADDR\"" extra
  IFS=',' read -ra extra <<<"${SWARM_INSECURE_REGISTRIES:-}"
  for registry in "${extra[@]}"; do
    [[ -n $registry ]] && registries+=", \"$registry\""
  done
  cat <<JSON
{
  "data-root": "$SWARM_DIR/data",
  "exec-root": "$SWARM_DIR/exec",
  "pidfile": "$SWARM_DIR/dockerd.pid",
  "hosts": ["$SWARM_DOCKER_HOST"],
  "bridge": "$SWARM_BRIDGE",
  "iptables": false,
  "ip-masq": false,
  "live-restore": false,
  "no-new-privileges": true,
  "insecure-registries": [$registries],
  "log-driver": "json-file",
  "log-opts": { "max-size": "10m", "max-file": "3" }
}
JSON
}

# ensure_swarm_bridge: the engine's default bridge (dockerd needs a bridge of a non-default name to
# exist already).
ensure_swarm_bridge() {
  ip link show "$SWARM_BRIDGE" >/dev/null 2>&1 && return
  ip link add "$SWARM_BRIDGE" type bridge
  ip addr add "$SWARM_BRIDGE_ADDR" dev "$SWARM_BRIDGE"
  ip link set "$SWARM_BRIDGE" up
}

# remove_stale_vxlan_links: a swarm engine stopped without tearing its overlay sandboxes down leaves
# their vxlan links (vx-<vni>-<network>) in the host namespace, and tasks joining those networks
# again fail with "error creating vxlan interface: file exists" (moby/libnetwork#1765). With the
# engine down, every such link is stale (docs/multi-host.md: the same step for operators).
remove_stale_vxlan_links() {
  local link
  while read -r link; do
    [[ $link == vx-* ]] && ip link delete "$link" 2>/dev/null
  done < <(ip -o link show type vxlan | awk -F': ' '{ print $2 }' | cut -d@ -f1)
  return 0
}

start_swarm_engine() {
  # One swarm engine per host: docker_gwbridge, $SWARM_BRIDGE and the manager port are host-wide.
  if [[ $SWARM_ADVERTISE_ADDR == 127.0.0.1 ]] && port_busy 2377; then
    die "127.0.0.1:2377 is taken but no swarm engine answers on $SWARM_SOCKET: an engine of an older checkout layout (.data/swarm) may run; stop it (kill the pid in its dockerd.pid)"
  fi
  mkdir -p "$SWARM_DIR" "$(dirname "$SWARM_SOCKET")"
  ensure_swarm_bridge
  remove_stale_vxlan_links
  swarm_daemon_config >"$SWARM_DIR/daemon.json"
  say "swarm engine: starting dockerd on $SWARM_SOCKET"
  start_bg swarm-dockerd dockerd --config-file "$SWARM_DIR/daemon.json"
  wait_until 60 swarm_engine_up || {
    show_log "$LOGS/swarm-dockerd.log"
    die "the swarm engine did not answer on $SWARM_SOCKET within 60s"
  }
}

swarm_state() { swarm_docker info --format '{{.Swarm.LocalNodeState}}' 2>/dev/null; }

ensure_swarm_mode() {
  local state
  state=$(swarm_state)
  if [[ $state == active ]]; then
    # Failed tasks are how a failed update is explained (a node that cannot pull): keep Docker's
    # default history of 5 per slot, also on a swarm initialised with less.
    quietly swarm-update swarm_docker swarm update --task-history-limit 5
    say "swarm engine: swarm active ($(swarm_docker info --format '{{.Swarm.Nodes}}') node(s))"
    return
  fi
  say "swarm engine: initialising a single-node swarm on $SWARM_ADVERTISE_ADDR"
  quietly swarm-init swarm_docker swarm init \
    --advertise-addr "$SWARM_ADVERTISE_ADDR" --listen-addr "$SWARM_ADVERTISE_ADDR:2377" \
    --default-addr-pool "$SWARM_ADDRESS_POOL" --default-addr-pool-mask-length 24 \
    --task-history-limit 5
}

# ensure_swarm_registry_image: the swarm engine pulls the base image from the platform registry
# (it cannot see the dev engine's local images), which proves the registry is reachable from it.
ensure_swarm_registry_image() {
  local image="$REGISTRY_ADDR/$REGISTRY_IMAGE"
  if swarm_docker image inspect "$image" >/dev/null 2>&1; then
    say "swarm engine: $image present"
    return
  fi
  quietly swarm-pull swarm_docker pull "$image"
  say "swarm engine: pulled $image from the platform registry"
}

swarm_engine_down() { ! swarm_engine_up; }

# restart_swarm_engine: stops the running engine through the pid file dockerd writes itself (any
# checkout may have started it), then starts it again with the current daemon.json. The swarm and
# its services are kept in the data-root; their tasks start again.
restart_swarm_engine() {
  local pid
  pid=$(cat "$SWARM_DIR/dockerd.pid" 2>/dev/null || true)
  [[ $pid =~ ^[0-9]+$ && $(cat "/proc/$pid/comm" 2>/dev/null) == dockerd ]] ||
    die "the swarm engine's configuration changed but no dockerd pid is in $SWARM_DIR/dockerd.pid"
  kill -TERM "$pid"
  wait_until 60 swarm_engine_down || die "the swarm engine (pid $pid) did not stop within 60s"
  wait_until 30 test ! -e "/proc/$pid" || die "the swarm engine (pid $pid) did not exit within 30s"
  start_swarm_engine
}

# ensure_swarm_engine: idempotent; leaves a running engine (and its swarm) as it is, unless its
# daemon.json changed (a setting added by a newer checkout): then the engine restarts with it.
ensure_swarm_engine() {
  if swarm_engine_up && swarm_daemon_config | cmp -s - "$SWARM_DIR/daemon.json"; then
    say "swarm engine: running on $SWARM_SOCKET"
  elif swarm_engine_up; then
    say "swarm engine: its daemon.json changed; restarting it"
    restart_swarm_engine
  else
    start_swarm_engine
  fi
  ensure_swarm_mode
  ensure_swarm_registry_image
}

# stop_swarm_engine: only from the checkout that started it (its pid file), as for the dev engine.
stop_swarm_engine() { stop_bg swarm-dockerd 30; }
