import { Inject, Injectable } from '@nestjs/common';
import { Transactional } from '@nestjs-cls/transactional';
import { AuditService } from '../audit/audit.service';
import { AppError } from '../common/errors';
import { keysetPage, type Page, type PageQuery, pagePosition } from '../common/pagination';
import { SecretBox } from '../common/secret-box';
import type { CreateNodeRequest, UpdateNodeRequest } from './dto/node.dto';
import { NODE_AUDIT_ACTIONS } from './nodes.constants';
import { type NodeChanges, type NodeRecord, NodesRepository } from './nodes.repository';
import { generateRealityKeys, generateShortIds } from './reality';

/** What the audit log keeps of a node: its settings, never a key. */
function auditView(node: NodeRecord): Record<string, unknown> {
  return {
    name: node.name,
    host: node.host,
    ssh_port: node.sshPort,
    ssh_user: node.sshUser,
    ssh_host_key_sha256: node.sshHostKeySha256,
    tunnel_port: node.tunnelPort,
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
  ) {}

  /** Makes the node's REALITY keys and short ids; seals both private keys before storing. */
  @Transactional()
  async create(actorId: string, request: CreateNodeRequest): Promise<NodeRecord> {
    const keys = generateRealityKeys();
    const node = await this.nodes.insert({
      name: request.name,
      host: request.host.toLowerCase(),
      sshPort: request.ssh_port ?? 22,
      sshUser: request.ssh_user ?? 'root',
      sshPrivateKeyEnc: this.box.seal(request.ssh_private_key),
      sshHostKeySha256: request.ssh_host_key_sha256 ?? null,
      tunnelPort: request.tunnel_port ?? 443,
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

  @Transactional()
  async update(actorId: string, id: string, request: UpdateNodeRequest): Promise<NodeRecord> {
    const before = await this.nodes.lock(id);
    if (!before) throw new AppError('NOT_FOUND', 'node not found');
    const changes: NodeChanges = {
      name: request.name,
      host: request.host?.toLowerCase(),
      sshPort: request.ssh_port,
      sshUser: request.ssh_user,
      sshPrivateKeyEnc:
        request.ssh_private_key === undefined ? undefined : this.box.seal(request.ssh_private_key),
      sshHostKeySha256: request.ssh_host_key_sha256,
      tunnelPort: request.tunnel_port,
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

  /** Out of routing and health checks at once; its counted traffic stays. */
  @Transactional()
  async delete(actorId: string, id: string): Promise<void> {
    const before = await this.nodes.lock(id);
    if (!before || !(await this.nodes.softDelete(id))) {
      throw new AppError('NOT_FOUND', 'node not found');
    }
    await this.record(actorId, NODE_AUDIT_ACTIONS.deleted, id, auditView(before), null);
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
