import { Inject, Injectable } from '@nestjs/common';
import { Transactional } from '@nestjs-cls/transactional';
import { AuditService } from '../audit/audit.service';
import { AppError, validationFailed } from '../common/errors';
import { keysetPage, type Page, type PageQuery, pagePosition } from '../common/pagination';
import { SecretBox } from '../common/secret-box';
import type { CreateNodeRequest, UpdateNodeRequest } from './dto/node.dto';
import { NodeHosts } from './node-hosts';
import { NODE_AUDIT_ACTIONS } from './nodes.constants';
import {
  type AgentCredentials,
  type NodeChanges,
  type NodeRecord,
  NodesRepository,
  type NodeTrafficDayFigures,
} from './nodes.repository';
import {
  generateAdmissionCertificate,
  generateNodeSecret,
  nodeSecretHash,
} from './node-credentials';
import { NodeSecretLookup } from './node-secret-lookup';
import { generateRealityKeys, generateShortIds } from './reality';

export const DEFAULT_TUNNEL_PORT = 443;
export const DEFAULT_ADMISSION_PORT = 8443;

/** The agent listens beside the tunnel on the same host: the two ports must differ. */
function checkPorts(tunnelPort: number, admissionPort: number): void {
  if (tunnelPort === admissionPort) {
    throw validationFailed([
      { field: 'admission_port', message: `must differ from tunnel_port (${tunnelPort})` },
    ]);
  }
}

/** What the audit log keeps of a node: its settings, never a key. */
function auditView(node: NodeRecord): Record<string, unknown> {
  return {
    name: node.name,
    host: node.host,
    ssh_port: node.sshPort,
    ssh_user: node.sshUser,
    ssh_host_key_sha256: node.sshHostKeySha256,
    tunnel_port: node.tunnelPort,
    admission_port: node.admissionPort,
    sni_domain: node.sniDomain,
    traffic_multiplier: Number(node.trafficMultiplier),
  };
}

/** The node registry: staff create, change and delete nodes; every change is audited. */
@Injectable()
export class NodesService {
  constructor(
    private readonly nodes: NodesRepository,
    private readonly audit: AuditService,
    @Inject(SecretBox) private readonly box: SecretBox,
    private readonly secrets: NodeSecretLookup,
    private readonly hosts: NodeHosts,
  ) {}

  /**
   * Makes the node's REALITY keys and short ids, the agent's TLS key and certificate and the
   * node's own secret; seals every private part before storing.
   */
  async create(actorId: string, request: CreateNodeRequest): Promise<NodeRecord> {
    await this.hosts.assertOutward({ host: request.host });
    const tunnelPort = request.tunnel_port ?? DEFAULT_TUNNEL_PORT;
    const admissionPort = request.admission_port ?? DEFAULT_ADMISSION_PORT;
    checkPorts(tunnelPort, admissionPort);
    const host = request.host.toLowerCase();
    // Made before the transaction: key generation need not hold a connection.
    const agent = await this.agentCredentials(host);
    return this.insert(actorId, request, { host, tunnelPort, admissionPort, agent });
  }

  @Transactional()
  private async insert(
    actorId: string,
    request: CreateNodeRequest,
    made: { host: string; tunnelPort: number; admissionPort: number; agent: AgentCredentials },
  ): Promise<NodeRecord> {
    const keys = generateRealityKeys();
    const node = await this.nodes.insert({
      name: request.name,
      host: made.host,
      sshPort: request.ssh_port ?? 22,
      sshUser: request.ssh_user ?? 'root',
      sshPrivateKeyEnc: this.box.seal(request.ssh_private_key),
      sshHostKeySha256: request.ssh_host_key_sha256 ?? null,
      tunnelPort: made.tunnelPort,
      admissionPort: made.admissionPort,
      agent: made.agent,
      shortIds: generateShortIds(),
      publicKey: keys.publicKey,
      realityPrivateKeyEnc: this.box.seal(keys.privateKey),
      sniDomain: request.sni_domain.toLowerCase(),
      trafficMultiplier: String(request.traffic_multiplier ?? 1),
    });
    await this.record(actorId, NODE_AUDIT_ACTIONS.created, node.id, null, auditView(node));
    return node;
  }

  async list(query: PageQuery): Promise<Page<NodeRecord>> {
    const { after, limit } = pagePosition(query);
    return keysetPage(await this.nodes.page(after, limit + 1), limit);
  }

  async get(id: string): Promise<NodeRecord> {
    const node = await this.nodes.get(id);
    if (!node) throw new AppError('NOT_FOUND', 'node not found');
    return node;
  }

  /** The node's daily traffic of the last `days` UTC days; a deleted node is NOT_FOUND. */
  @Transactional()
  async traffic(id: string, days: number): Promise<NodeTrafficDayFigures[]> {
    await this.get(id);
    return this.nodes.trafficDays(id, days);
  }

  @Transactional()
  async update(actorId: string, id: string, request: UpdateNodeRequest): Promise<NodeRecord> {
    await this.hosts.assertOutward({ host: request.host });
    const before = await this.nodes.lock(id);
    if (!before) throw new AppError('NOT_FOUND', 'node not found');
    checkPorts(
      request.tunnel_port ?? before.tunnelPort,
      request.admission_port ?? before.admissionPort,
    );
    const changes: NodeChanges = {
      name: request.name,
      host: request.host?.toLowerCase(),
      sshPort: request.ssh_port,
      sshUser: request.ssh_user,
      sshPrivateKeyEnc:
        request.ssh_private_key === undefined ? undefined : this.box.seal(request.ssh_private_key),
      sshHostKeySha256: request.ssh_host_key_sha256,
      tunnelPort: request.tunnel_port,
      admissionPort: request.admission_port,
      sniDomain: request.sni_domain?.toLowerCase(),
      trafficMultiplier:
        request.traffic_multiplier === undefined ? undefined : String(request.traffic_multiplier),
    };
    const after = (await this.nodes.update(id, changes))!;
    const auditAfter: Record<string, unknown> = auditView(after);
    if (request.ssh_private_key !== undefined) auditAfter.ssh_private_key = 'replaced';
    await this.record(actorId, NODE_AUDIT_ACTIONS.changed, id, auditView(before), auditAfter);
    return after;
  }

  /**
   * Out of routing and health checks at once, and its secret refused (at once here, within
   * NODE_SECRET_STALE_MS on other instances); its counted traffic stays.
   */
  async delete(actorId: string, id: string): Promise<void> {
    await this.softDelete(actorId, id);
    this.secrets.forgetNode(id);
  }

  @Transactional()
  private async softDelete(actorId: string, id: string): Promise<void> {
    const before = await this.nodes.lock(id);
    if (!before || !(await this.nodes.softDelete(id))) {
      throw new AppError('NOT_FOUND', 'node not found');
    }
    await this.record(actorId, NODE_AUDIT_ACTIONS.deleted, id, auditView(before), null);
  }

  /**
   * Gives a node made before the agent its certificate and secret (provisioning calls this);
   * a node that has them keeps them.
   */
  async ensureAgentCredentials(node: NodeRecord): Promise<void> {
    if (node.admissionCertSha256 !== null) return;
    await this.nodes.addAgentCredentials(node.id, await this.agentCredentials(node.host));
  }

  /** A fresh certificate for the tunnel host and a fresh node secret, private parts sealed. */
  private async agentCredentials(tunnelHost: string): Promise<AgentCredentials> {
    const cert = await generateAdmissionCertificate(tunnelHost);
    const secret = generateNodeSecret();
    return {
      admissionCertPem: cert.certPem,
      admissionCertSha256: cert.certSha256,
      admissionKeyEnc: this.box.seal(cert.keyPem),
      agentSecretEnc: this.box.seal(secret),
      agentSecretSha256: nodeSecretHash(secret),
    };
  }

  /** An audit entry in the current transaction (or on its own when there is none). */
  record(
    actorId: string | null,
    action: string,
    nodeId: string,
    before: unknown,
    after: unknown,
  ): Promise<void> {
    return this.audit.record({
      actorId,
      action,
      targetType: 'node',
      targetId: nodeId,
      before,
      after,
    });
  }
}
