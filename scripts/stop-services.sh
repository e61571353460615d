#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# Stops the infrastructure services that setup-services.sh started from this checkout (by their
# pid files in .data/run): Caddy, PowerDNS, the registry and dockerd. PostgreSQL and Redis belong
# to the machine and keep running. Run stack-down.sh first.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/lib/common.sh"

for name in caddy pdns registry; do stop_bg "$name" 10; done
stop_bg dockerd 30
say "services stopped"
