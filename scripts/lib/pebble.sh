# shellcheck shell=bash
# Pebble, the ACME test CA (docs/tls.md): ACME directory https://127.0.0.1:14000/dir, management
# (roots, intermediates) https://127.0.0.1:15000, validations against the stack's PowerDNS
# (127.0.0.1:5300); http-01 validations connect to port 80, Caddy's HTTP listener, as a public
# CA does (the worker answers them with a Caddy route: docs/tls.md). It keeps no state: each start makes new roots, so clients fetch them from the
# management API rather than from a file. Its own listener certificate (self-signed for
# 127.0.0.1/localhost) is $PEBBLE_DIR/tls.crt: what ACME clients trust to talk to it.

PEBBLE_DIR="$DATA/pebble"
PEBBLE_DIRECTORY=https://127.0.0.1:14000/dir
PEBBLE_TLS_CERT="$PEBBLE_DIR/tls.crt"

pebble_up() { curl -fs --noproxy '*' --max-time 5 --cacert "$PEBBLE_TLS_CERT" -o /dev/null "$PEBBLE_DIRECTORY"; }

# running_pebble_cert: the listener certificate of a pebble already on 14000 (started from another
# checkout of this repo), read through its -config file.
running_pebble_cert() {
  local pid config cert
  pid=$(ss -Hltnp 'sport = :14000' 2>/dev/null | grep -o 'pebble",pid=[0-9]*' | head -n 1 | cut -d= -f2)
  [[ -n $pid ]] || return 1
  config=$(tr '\0' '\n' <"/proc/$pid/cmdline" | sed -n '/^-config$/{n;p}')
  [[ -n $config && -f $config ]] || return 1
  cert=$(sed -n 's/.*"certificate": *"\([^"]*\)".*/\1/p' "$config")
  [[ -n $cert && -f $cert ]] || return 1
  printf '%s' "$cert"
}

# pebble_config: the configuration this checkout runs pebble with.
pebble_config() {
  cat <<JSON
{
  "pebble": {
    "listenAddress": "127.0.0.1:14000",
    "managementListenAddress": "127.0.0.1:15000",
    "certificate": "$PEBBLE_TLS_CERT",
    "privateKey": "$PEBBLE_DIR/tls.key",
    "httpPort": 80,
    "tlsPort": 443,
    "ocspResponderURL": "",
    "externalAccountBindingRequired": false
  }
}
JSON
}

ensure_pebble() {
  mkdir -p "$PEBBLE_DIR"
  if [[ -f $PEBBLE_TLS_CERT ]] && pebble_up; then
    # A pebble this checkout started with another configuration (before http-01 moved to port
    # 80) is restarted; its roots change, and clients read them again (docs/tls.md).
    if pid_of pebble >/dev/null && [[ $(cat "$PEBBLE_DIR/pebble.json" 2>/dev/null) != "$(pebble_config)" ]]; then
      say "pebble: restarting with the new configuration"
      stop_bg pebble
    else
      say "pebble: running"
      return
    fi
  fi
  if port_busy 14000; then
    local other
    other=$(running_pebble_cert) || die "127.0.0.1:14000 is taken by something that is not a pebble we know"
    [[ $other == "$PEBBLE_TLS_CERT" ]] || cp "$other" "$PEBBLE_TLS_CERT"
    pebble_up || die "the pebble on 127.0.0.1:14000 does not answer"
    say "pebble: running (started from another checkout)"
    return
  fi
  if [[ ! -f $PEBBLE_DIR/tls.key ]]; then
    quietly pebble-cert openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
      -days 3650 -subj /CN=pebble -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" \
      -keyout "$PEBBLE_DIR/tls.key" -out "$PEBBLE_TLS_CERT"
  fi
  pebble_config >"$PEBBLE_DIR/pebble.json"
  say "pebble: starting (ACME 127.0.0.1:14000, management 127.0.0.1:15000, DNS via 127.0.0.1:5300)"
  # No random validation delay: issuance in tests takes seconds, not a minute.
  start_bg pebble env PEBBLE_VA_NOSLEEP=1 pebble -config "$PEBBLE_DIR/pebble.json" -dnsserver 127.0.0.1:5300
  wait_until 30 pebble_up || {
    show_log "$LOGS/pebble.log"
    die "pebble did not answer within 30s"
  }
}
