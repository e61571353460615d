#!/usr/bin/env bash
# shellcheck source-path=SCRIPTDIR
# Starts the whole dev stack: infrastructure services (setup-services.sh), seed data, then the dev
# identity provider, the API (serving the web dashboard, built here when its sources changed) and the
# worker in the background. Re-running restarts the three apps. Ends by printing the addresses.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/lib/common.sh"
. "$here/lib/apps.sh"
cd "$ROOT"

bash "$here/setup-services.sh"
load_env "$DATA/env"

if [[ -f packages/db/src/seed-cli.ts ]]; then
  quietly db-seed pnpm -s db:seed
  say "seed data: loaded"
else
  warn "packages/db/src/seed-cli.ts does not exist yet: no seed data"
fi

build_dashboard
stop_apps
for app in "${APPS[@]}"; do start_app "$app"; done

cat <<MSG
==> dev stack is up
    dashboard    ${PUBLIC_URL%/}/   (open it in a browser; dev accounts: apps/dev-idp/accounts.json)
    api          http://127.0.0.1:3000/api   (docs: /api/docs, readyz: /readyz)
    dev-idp      http://127.0.0.1:3100   (OIDC issuer)
    services     http://<name>.apps.localhost (Caddy on 127.0.0.1:80, admin http://127.0.0.1:2019)
    registry     127.0.0.1:5000          powerdns dns 127.0.0.1:5300, api http://127.0.0.1:8081
    environment  .data/env               logs .data/logs/{api,worker,dev-idp}.log
    stop with    bash scripts/stack-down.sh
MSG
