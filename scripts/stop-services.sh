#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# Stops the infrastructure services that setup-services.sh started from this checkout (by their
# pid files in .data/run): Caddy, PowerDNS, the registry, the swarm engine and dockerd. PostgreSQL and Redis belong
# to the machine and keep running. Run stack-down.sh first.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/lib/common.sh"
. "$here/lib/docker.sh"
. "$here/lib/swarm-engine.sh"

for name in caddy pdns registry; do stop_bg "$name" 10; done
stop_swarm_engine
stop_bg dockerd 30
say "services stopped"
