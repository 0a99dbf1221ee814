import { Check, Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

export const NODE_STATUSES = ['online', 'offline', 'unknown'] as const;
export type NodeStatus = (typeof NODE_STATUSES)[number];

export const PROVISION_STATES = ['new', 'provisioning', 'ready', 'failed'] as const;
export type ProvisionState = (typeof PROVISION_STATES)[number];

/**
 * A tunnel node. The SSH private key, the REALITY private key, the agent's TLS key and the node's
 * own secret are stored only sealed with DATA_ENCRYPTION_KEY (see secret-box.ts) and are never
 * returned; the secret is found by its SHA-256. A deleted node keeps its row
 * (`deleted_at`) so traffic already counted on it stays auditable; every read skips it.
 */
@Entity('nodes')
@Check('CHK_nodes_status', "status IN ('online', 'offline', 'unknown')")
@Check('CHK_nodes_provision_state', "provision_state IN ('new', 'provisioning', 'ready', 'failed')")
@Check('CHK_nodes_ssh_port', 'ssh_port BETWEEN 1 AND 65535')
@Check('CHK_nodes_tunnel_port', 'tunnel_port BETWEEN 1 AND 65535')
@Check('CHK_nodes_admission_port', 'admission_port BETWEEN 1 AND 65535')
@Check('CHK_nodes_admission_not_tunnel', 'admission_port <> tunnel_port')
@Check('CHK_nodes_traffic_multiplier', 'traffic_multiplier >= 0.1 AND traffic_multiplier <= 10')
@Index('IDX_nodes_routing', ['name', 'id'], {
  where: "deleted_at IS NULL AND status = 'online' AND provision_state = 'ready'",
})
@Index('IDX_nodes_agent_secret', ['agentSecretSha256'], {
  unique: true,
  where: 'agent_secret_sha256 IS NOT NULL',
})
@Index('IDX_nodes_created_at', ['createdAt', 'id'], { where: 'deleted_at IS NULL' })
export class Node {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ type: 'text' })
  name: string;

  @Column({ type: 'text' })
  host: string;

  @Column({ type: 'integer', default: 22 })
  sshPort: number;

  @Column({ type: 'text', default: 'root' })
  sshUser: string;

  /** Sealed; never returned. */
  @Column({ type: 'text' })
  sshPrivateKeyEnc: string;

  /** OpenSSH form `SHA256:<base64>`; recorded on the first connection when unset. */
  @Column({ type: 'text', nullable: true })
  sshHostKeySha256: string | null;

  @Column({ type: 'integer', default: 443 })
  tunnelPort: number;

  @Column({ type: 'text', default: 'vless' })
  tunnelProtocol: string;

  @Column({ type: 'text', default: 'xtls-rprx-vision' })
  tunnelFlow: string;

  /** REALITY short ids (hex); the first is handed to clients. */
  @Column({ type: 'text', array: true })
  shortIds: string[];

  /** REALITY x25519 public key, base64url as Xray prints it. */
  @Column({ type: 'text' })
  publicKey: string;

  /** Sealed; never returned. */
  @Column({ type: 'text' })
  realityPrivateKeyEnc: string;

  @Column({ type: 'text' })
  sniDomain: string;

  @Column({ type: 'numeric', precision: 6, scale: 3, default: 1 })
  trafficMultiplier: string;

  /** The agent's HTTPS admission port on the tunnel host; never the tunnel port. */
  @Column({ type: 'integer', default: 8443 })
  admissionPort: number;

  /**
   * The agent's self-signed certificate (PEM), its hex SHA-256 (of the DER, lower case) and its
   * sealed key. Made with the node; null only on nodes created before the agent, which get them
   * at their next provisioning.
   */
  @Column({ type: 'text', nullable: true })
  admissionCertPem: string | null;

  @Column({ type: 'text', nullable: true })
  admissionCertSha256: string | null;

  /** Sealed; never returned. */
  @Column({ type: 'text', nullable: true })
  admissionKeyEnc: string | null;

  /** The node's own `X-Internal-Secret`, sealed for provisioning; never returned. */
  @Column({ type: 'text', nullable: true })
  agentSecretEnc: string | null;

  /** Hex SHA-256 of that secret: how a request's secret finds its node. */
  @Column({ type: 'text', nullable: true })
  agentSecretSha256: string | null;

  @Column({ type: 'text', default: 'unknown' })
  status: NodeStatus;

  @Column({ type: 'text', default: 'new' })
  provisionState: ProvisionState;

  @Column({ type: 'timestamptz', nullable: true })
  provisionStartedAt: Date | null;

  @Column({ type: 'text', nullable: true })
  lastError: string | null;

  @Column({ type: 'timestamptz', nullable: true })
  lastCheckedAt: Date | null;

  @Column({ type: 'timestamptz', nullable: true })
  lastReportAt: Date | null;

  @CreateDateColumn({ type: 'timestamptz' })
  createdAt: Date;

  @Column({ type: 'timestamptz', nullable: true })
  deletedAt: Date | null;
}
