#!/usr/bin/env bash
# Provisions a tunnel node; run by the service over SSH as root (or through sudo -n).
#
#   provision.sh <tunnel port> <admission port>
#
# The service uploads, before running this, with mode 0600 and through stdin (never on a command
# line):
#   /opt/vpn-node/staging/xray-config.json  the Xray configuration (holds the REALITY private key)
#   /opt/vpn-node/staging/agent.env         the node agent's settings (holds the node's own secret)
#   /opt/vpn-node/staging/agent.js          the node agent (one file, Node 18 or newer)
#   /opt/vpn-node/staging/tls.crt           the agent's self-signed admission certificate
#   /opt/vpn-node/staging/tls.key           its private key
# It installs Xray and Node.js when missing, a systemd unit for each (the agent under a system user
# of its own, its journal in /var/lib/vpn-node-agent), the files, opens both ports and restarts
# both. Idempotent: running it again converges on the same state.
set -euo pipefail

readonly XRAY_VERSION="v25.10.15"
readonly NODE_MIN_MAJOR=18
# SHA-256 of each release archive of XRAY_VERSION: the SHA2-256 line of the release's
# Xray-linux-<arch>.zip.dgst, checked against the published archive once, then recorded here (and
# again whenever XRAY_VERSION changes). The service's XRAY_ARCHIVE_SHA256 setting, passed as the
# third argument, pins the archive of the node's own architecture instead. A download that does not
# match is never installed; with no digest for an architecture, nothing is downloaded there.
readonly XRAY_SHA256_64=""
readonly XRAY_SHA256_ARM64_V8A=""
readonly XRAY_SHA256_GIVEN="${3:-}"
readonly STAGING="/opt/vpn-node/staging"
readonly XRAY_BIN="/usr/local/bin/xray"
readonly XRAY_CONFIG_DIR="/usr/local/etc/xray"
readonly XRAY_UNIT_FILE="/etc/systemd/system/xray.service"
readonly AGENT_USER="vpn-node-agent"
readonly AGENT_DIR="/opt/vpn-node-agent"
readonly AGENT_CONFIG_DIR="/etc/vpn-node-agent"
readonly AGENT_UNIT_FILE="/etc/systemd/system/vpn-node-agent.service"
# Xray's access log lives in its runtime directory (memory): who connected from where never reaches
# a disk. The agent reads it to close an ended session's connections; logrotate empties it.
readonly XRAY_ACCESS_LOG="/run/xray/access.log"
readonly LOGROTATE_FILE="/etc/logrotate.d/vpn-node-xray"
# Where an earlier version kept the service-wide secret: removed on every run.
readonly LEGACY_PROXY_SETTINGS="/etc/vpn-node/proxy.env"

valid_port() {
  [[ "${1}" =~ ^[0-9]+$ ]] && ((${1} >= 1 && ${1} <= 65535))
}

tunnel_port="${1:-}"
admission_port="${2:-}"
if ! valid_port "${tunnel_port}" || ! valid_port "${admission_port}" ||
  ((tunnel_port == admission_port)); then
  echo "usage: provision.sh <tunnel port 1-65535> <admission port 1-65535, not the tunnel port>" >&2
  exit 2
fi

readonly STAGED=(xray-config.json agent.env agent.js tls.crt tls.key)
for file in "${STAGED[@]}"; do
  if [[ ! -s "${STAGING}/${file}" ]]; then
    echo "missing ${STAGING}/${file}: the service uploads it before running this script" >&2
    exit 3
  fi
done

install_packages() {
  if command -v apt-get >/dev/null 2>&1; then
    DEBIAN_FRONTEND=noninteractive apt-get update -q
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@"
  elif command -v dnf >/dev/null 2>&1; then
    dnf install -y -q "$@"
  else
    echo "no apt-get or dnf: install $* first" >&2
    exit 4
  fi
}

# verify_sha256 <file> <expected hex digest>: exits 6 unless the file has that SHA-256.
verify_sha256() {
  local actual
  actual="$(sha256sum "$1" | cut -d ' ' -f 1)"
  if [[ "${actual}" != "$2" ]]; then
    echo "$(basename "$1"): SHA-256 ${actual} is not the pinned $2; not installed" >&2
    exit 6
  fi
}

install_xray() {
  if [[ -x "${XRAY_BIN}" ]] && "${XRAY_BIN}" version 2>/dev/null | grep -q "${XRAY_VERSION#v}"; then
    return
  fi
  if ! command -v curl >/dev/null 2>&1 || ! command -v unzip >/dev/null 2>&1; then
    install_packages curl unzip ca-certificates
  fi
  local arch sha256
  case "$(uname -m)" in
    x86_64 | amd64) arch="64" sha256="${XRAY_SHA256_64}" ;;
    aarch64 | arm64) arch="arm64-v8a" sha256="${XRAY_SHA256_ARM64_V8A}" ;;
    *)
      echo "unsupported architecture $(uname -m)" >&2
      exit 5
      ;;
  esac
  local work
  work="$(mktemp -d)"
  trap 'rm -rf "${work}"' RETURN
  if [[ -n "${XRAY_SHA256_GIVEN}" ]]; then
    sha256="${XRAY_SHA256_GIVEN}"
  fi
  if [[ ! "${sha256}" =~ ^[0-9a-f]{64}$ ]]; then
    echo "no SHA-256 for Xray ${XRAY_VERSION} (Xray-linux-${arch}.zip): set XRAY_ARCHIVE_SHA256 on the service to the SHA2-256 line of the release's .dgst file; not downloading an archive that cannot be checked" >&2
    exit 6
  fi
  curl -fsSL -o "${work}/xray.zip" \
    "https://github.com/XTLS/Xray-core/releases/download/${XRAY_VERSION}/Xray-linux-${arch}.zip"
  verify_sha256 "${work}/xray.zip" "${sha256}"
  unzip -q -o "${work}/xray.zip" -d "${work}/xray"
  install -m 0755 "${work}/xray/xray" "${XRAY_BIN}"
  install -d -m 0755 /usr/local/share/xray
  install -m 0644 "${work}/xray/geoip.dat" "${work}/xray/geosite.dat" /usr/local/share/xray/
}

node_major() {
  local version
  version="$(node --version 2>/dev/null || true)"
  version="${version#v}"
  echo "${version%%.*}"
}

# The agent needs Node.js 18 or newer: Debian's `nodejs` package when there is none.
install_node() {
  local major
  major="$(node_major)"
  if [[ "${major}" =~ ^[0-9]+$ ]] && ((major >= NODE_MIN_MAJOR)); then
    return
  fi
  install_packages nodejs
  major="$(node_major)"
  if [[ ! "${major}" =~ ^[0-9]+$ ]] || ((major < NODE_MIN_MAJOR)); then
    echo "the node agent needs Node.js ${NODE_MIN_MAJOR} or newer; found '${major:-none}'" >&2
    exit 6
  fi
}

# The agent closes an ended session's connections with `ss -K` (iproute2).
install_iproute() {
  command -v ss >/dev/null 2>&1 || install_packages iproute2
}

install_logrotate_rule() {
  [[ -d /etc/logrotate.d ]] || return 0
  cat >"${LOGROTATE_FILE}.tmp" <<ROTATE
${XRAY_ACCESS_LOG} {
  daily
  maxsize 64M
  rotate 0
  copytruncate
  missingok
  notifempty
}
ROTATE
  mv "${LOGROTATE_FILE}.tmp" "${LOGROTATE_FILE}"
}

install_users() {
  id -u xray >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin xray
  id -u "${AGENT_USER}" >/dev/null 2>&1 ||
    useradd --system --no-create-home --shell /usr/sbin/nologin "${AGENT_USER}"
}

# Replaces a unit file only when it changed; true (0) when it did.
write_unit() {
  local file="${1}" content="${2}"
  if [[ -f "${file}" ]] && [[ "$(cat "${file}")" == "${content}" ]]; then
    return 1
  fi
  printf '%s\n' "${content}" >"${file}.tmp"
  mv "${file}.tmp" "${file}"
}

install_units() {
  local node_bin changed=0
  node_bin="$(command -v node)"
  # XRAY_BUF_SPLICE=disable: with splice the kernel moves a connection's bytes and per-user
  # counters learn them only when it closes; the agent must see them while they flow.
  # The API (a unix socket) and the access log are in /run/xray (RuntimeDirectory), reachable by the
  # group xray only.
  write_unit "${XRAY_UNIT_FILE}" "[Unit]
Description=Xray tunnel (VLESS + REALITY)
After=network-online.target
Wants=network-online.target

[Service]
User=xray
Group=xray
Environment=XRAY_BUF_SPLICE=disable
RuntimeDirectory=xray
RuntimeDirectoryMode=0750
UMask=0007
AmbientCapabilities=CAP_NET_BIND_SERVICE
CapabilityBoundingSet=CAP_NET_BIND_SERVICE
NoNewPrivileges=true
ExecStart=${XRAY_BIN} run -config ${XRAY_CONFIG_DIR}/config.json
Restart=on-failure
RestartSec=3
LimitNOFILE=1048576

[Install]
WantedBy=multi-user.target" && changed=1
  write_unit "${AGENT_UNIT_FILE}" "[Unit]
Description=VPN node agent (admission, traffic reports, limits)
After=network-online.target xray.service
Wants=network-online.target xray.service

[Service]
User=${AGENT_USER}
Group=${AGENT_USER}
SupplementaryGroups=xray
EnvironmentFile=${AGENT_CONFIG_DIR}/agent.env
ExecStart=${node_bin} ${AGENT_DIR}/agent.js
Restart=on-failure
RestartSec=3
StateDirectory=vpn-node-agent
StateDirectoryMode=0700
# NET_ADMIN: ss -K closes an ended session's open connections (SOCK_DESTROY).
AmbientCapabilities=CAP_NET_BIND_SERVICE CAP_NET_ADMIN
CapabilityBoundingSet=CAP_NET_BIND_SERVICE CAP_NET_ADMIN
NoNewPrivileges=true
ProtectSystem=strict
ProtectHome=true
PrivateTmp=true
TimeoutStopSec=30

[Install]
WantedBy=multi-user.target" && changed=1
  if ((changed)); then systemctl daemon-reload; fi
}

write_settings() {
  install -d -m 0750 -g xray "${XRAY_CONFIG_DIR}"
  install -m 0640 -g xray "${STAGING}/xray-config.json" "${XRAY_CONFIG_DIR}/config.json"
  install -d -m 0755 "${AGENT_DIR}"
  install -m 0644 "${STAGING}/agent.js" "${AGENT_DIR}/agent.js"
  install -d -m 0750 -g "${AGENT_USER}" "${AGENT_CONFIG_DIR}"
  # Read by systemd (root) only: the node's secret never reaches another user.
  install -m 0600 "${STAGING}/agent.env" "${AGENT_CONFIG_DIR}/agent.env"
  install -m 0644 "${STAGING}/tls.crt" "${AGENT_CONFIG_DIR}/tls.crt"
  install -m 0640 -g "${AGENT_USER}" "${STAGING}/tls.key" "${AGENT_CONFIG_DIR}/tls.key"
  rm -f "${LEGACY_PROXY_SETTINGS}"
  for file in "${STAGED[@]}"; do rm -f "${STAGING:?}/${file}"; done
}

open_port() {
  local port="${1}"
  if command -v ufw >/dev/null 2>&1 && ufw status | grep -q "Status: active"; then
    ufw allow "${port}/tcp" >/dev/null
  elif command -v firewall-cmd >/dev/null 2>&1 && firewall-cmd --state >/dev/null 2>&1; then
    firewall-cmd --quiet --permanent --add-port="${port}/tcp"
    firewall-cmd --quiet --reload
  elif command -v iptables >/dev/null 2>&1; then
    iptables -C INPUT -p tcp --dport "${port}" -j ACCEPT 2>/dev/null ||
      iptables -I INPUT -p tcp --dport "${port}" -j ACCEPT
  fi
}

install_xray
install_node
install_iproute
install_users
install_units
install_logrotate_rule
write_settings
"${XRAY_BIN}" run -test -config "${XRAY_CONFIG_DIR}/config.json" >/dev/null
open_port "${tunnel_port}"
open_port "${admission_port}"
systemctl enable xray vpn-node-agent >/dev/null 2>&1
systemctl restart xray
systemctl restart vpn-node-agent
echo "provisioned: xray ${XRAY_VERSION} on port ${tunnel_port}, node agent on port ${admission_port}"
