#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# Stops the dev stack's app processes (worker, api, dev-idp) started by stack-up.sh. The
# infrastructure services keep running: scripts/stop-services.sh stops those.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/lib/common.sh"
. "$here/lib/apps.sh"

stop_apps
say "apps stopped"
