/** Audit actions on nodes (targetType `node`). */
export const NODE_AUDIT_ACTIONS = {
  created: 'node.created',
  changed: 'node.changed',
  deleted: 'node.deleted',
  provisionStarted: 'node.provision_started',
  provisioned: 'node.provisioned',
  provisionFailed: 'node.provision_failed',
  restartRequested: 'node.restart_requested',
  restarted: 'node.restarted',
  restartFailed: 'node.restart_failed',
} as const;

/**
 * Where the service uploads the provisioning files on a node (through stdin, mode 0600 for
 * everything secret); deploy/node/provision.sh installs them from there and empties the staging.
 */
export const NODE_PATHS = {
  dir: '/opt/vpn-node',
  script: '/opt/vpn-node/provision.sh',
  xrayConfig: '/opt/vpn-node/staging/xray-config.json',
  agentSettings: '/opt/vpn-node/staging/agent.env',
  agentBundle: '/opt/vpn-node/staging/agent.js',
  tlsCert: '/opt/vpn-node/staging/tls.crt',
  tlsKey: '/opt/vpn-node/staging/tls.key',
} as const;

/** The systemd unit of the tunnel (installed by deploy/node/provision.sh). */
export const XRAY_UNIT = 'xray';

/** The longest `last_error` kept: a short reason, never a transcript. */
export const LAST_ERROR_MAX = 300;
