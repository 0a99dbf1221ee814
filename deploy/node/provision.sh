#!/usr/bin/env bash
# Provisions a tunnel node; run by the service over SSH as root (or through sudo -n).
#
#   provision.sh <tunnel port>
#
# The service uploads, before running this, with mode 0600 and through stdin (never on a command
# line):
#   /opt/vpn-node/staging/xray-config.json  the Xray configuration (holds the REALITY private key)
#   /opt/vpn-node/staging/proxy.env         the proxy component's settings (service URL, node id,
#                                           internal secret)
# Idempotent: running it again converges on the same state and restarts the tunnel.
set -euo pipefail

readonly XRAY_VERSION="v25.10.15"
readonly STAGING="/opt/vpn-node/staging"
readonly XRAY_BIN="/usr/local/bin/xray"
readonly XRAY_CONFIG_DIR="/usr/local/etc/xray"
readonly PROXY_CONFIG_DIR="/etc/vpn-node"
readonly UNIT_FILE="/etc/systemd/system/xray.service"

tunnel_port="${1:-}"
if [[ ! "${tunnel_port}" =~ ^[0-9]+$ ]] || ((tunnel_port < 1 || tunnel_port > 65535)); then
  echo "usage: provision.sh <tunnel port 1-65535>" >&2
  exit 2
fi

for file in "${STAGING}/xray-config.json" "${STAGING}/proxy.env"; do
  if [[ ! -s "${file}" ]]; then
    echo "missing ${file}: the service uploads it before running this script" >&2
    exit 3
  fi
done

install_packages() {
  if command -v apt-get >/dev/null 2>&1; then
    DEBIAN_FRONTEND=noninteractive apt-get update -q
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q curl unzip ca-certificates
  elif command -v dnf >/dev/null 2>&1; then
    dnf install -y -q curl unzip ca-certificates
  else
    echo "no apt-get or dnf: install curl and unzip first" >&2
    exit 4
  fi
}

install_xray() {
  if [[ -x "${XRAY_BIN}" ]] && "${XRAY_BIN}" version 2>/dev/null | grep -q "${XRAY_VERSION#v}"; then
    return
  fi
  if ! command -v curl >/dev/null 2>&1 || ! command -v unzip >/dev/null 2>&1; then
    install_packages
  fi
  local arch
  case "$(uname -m)" in
    x86_64 | amd64) arch="64" ;;
    aarch64 | arm64) arch="arm64-v8a" ;;
    *)
      echo "unsupported architecture $(uname -m)" >&2
      exit 5
      ;;
  esac
  local work
  work="$(mktemp -d)"
  trap 'rm -rf "${work}"' RETURN
  curl -fsSL -o "${work}/xray.zip" \
    "https://github.com/XTLS/Xray-core/releases/download/${XRAY_VERSION}/Xray-linux-${arch}.zip"
  unzip -q -o "${work}/xray.zip" -d "${work}/xray"
  install -m 0755 "${work}/xray/xray" "${XRAY_BIN}"
  install -d -m 0755 /usr/local/share/xray
  install -m 0644 "${work}/xray/geoip.dat" "${work}/xray/geosite.dat" /usr/local/share/xray/
}

install_unit() {
  id -u xray >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin xray
  cat >"${UNIT_FILE}.tmp" <<'UNIT'
[Unit]
Description=Xray tunnel (VLESS + REALITY)
After=network-online.target
Wants=network-online.target

[Service]
User=xray
AmbientCapabilities=CAP_NET_BIND_SERVICE
CapabilityBoundingSet=CAP_NET_BIND_SERVICE
NoNewPrivileges=true
ExecStart=/usr/local/bin/xray run -config /usr/local/etc/xray/config.json
Restart=on-failure
RestartSec=3
LimitNOFILE=1048576

[Install]
WantedBy=multi-user.target
UNIT
  mv "${UNIT_FILE}.tmp" "${UNIT_FILE}"
  systemctl daemon-reload
}

write_settings() {
  install -d -m 0750 "${XRAY_CONFIG_DIR}" "${PROXY_CONFIG_DIR}"
  install -m 0640 -g xray "${STAGING}/xray-config.json" "${XRAY_CONFIG_DIR}/config.json"
  install -m 0600 "${STAGING}/proxy.env" "${PROXY_CONFIG_DIR}/proxy.env"
  chgrp xray "${XRAY_CONFIG_DIR}"
  rm -f "${STAGING}/xray-config.json" "${STAGING}/proxy.env"
}

open_port() {
  if command -v ufw >/dev/null 2>&1 && ufw status | grep -q "Status: active"; then
    ufw allow "${tunnel_port}/tcp" >/dev/null
  elif command -v firewall-cmd >/dev/null 2>&1 && firewall-cmd --state >/dev/null 2>&1; then
    firewall-cmd --quiet --permanent --add-port="${tunnel_port}/tcp"
    firewall-cmd --quiet --reload
  elif command -v iptables >/dev/null 2>&1; then
    iptables -C INPUT -p tcp --dport "${tunnel_port}" -j ACCEPT 2>/dev/null ||
      iptables -I INPUT -p tcp --dport "${tunnel_port}" -j ACCEPT
  fi
}

install_xray
install_unit
write_settings
"${XRAY_BIN}" run -test -config "${XRAY_CONFIG_DIR}/config.json" >/dev/null
open_port
systemctl enable xray >/dev/null 2>&1
systemctl restart xray
echo "provisioned: xray ${XRAY_VERSION} on port ${tunnel_port}"
