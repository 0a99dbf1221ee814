import { ApiProperty } from '@nestjs/swagger';
import {
  NODE_STATUSES,
  type NodeStatus,
  PROVISION_STATES,
  type ProvisionState,
} from '../entities/node.entity';
import type { NodeRecord, RoutingNode } from '../nodes.repository';

const iso = (value: Date | null): string | null => (value === null ? null : value.toISOString());

/** A node as staff see it; its private keys are never part of it. */
export class NodeResponse {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() name: string;
  @ApiProperty() host: string;
  @ApiProperty() ssh_port: number;
  @ApiProperty() ssh_user: string;
  @ApiProperty({ type: String, nullable: true }) ssh_host_key_sha256: string | null;
  @ApiProperty() tunnel_host: string;
  @ApiProperty() tunnel_port: number;
  @ApiProperty({ example: 'vless' }) tunnel_protocol: string;
  @ApiProperty({ example: 'xtls-rprx-vision' }) tunnel_flow: string;
  @ApiProperty({ description: 'REALITY short id handed to clients' }) tunnel_short_id: string;
  @ApiProperty({ description: 'REALITY x25519 public key, base64url' }) public_key: string;
  @ApiProperty() sni_domain: string;
  @ApiProperty({ minimum: 0.1, maximum: 10 }) traffic_multiplier: number;
  @ApiProperty({ enum: NODE_STATUSES }) status: NodeStatus;
  @ApiProperty({ enum: PROVISION_STATES }) provision_state: ProvisionState;
  @ApiProperty({ type: String, nullable: true }) last_error: string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  last_checked_at: string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  last_report_at: string | null;
  @ApiProperty({ format: 'date-time' }) created_at: string;

  static from(node: NodeRecord): NodeResponse {
    return {
      id: node.id,
      name: node.name,
      host: node.host,
      ssh_port: node.sshPort,
      ssh_user: node.sshUser,
      ssh_host_key_sha256: node.sshHostKeySha256,
      tunnel_host: node.host,
      tunnel_port: node.tunnelPort,
      tunnel_protocol: node.tunnelProtocol,
      tunnel_flow: node.tunnelFlow,
      tunnel_short_id: node.shortIds[0],
      public_key: node.publicKey,
      sni_domain: node.sniDomain,
      traffic_multiplier: Number(node.trafficMultiplier),
      status: node.status,
      provision_state: node.provisionState,
      last_error: node.lastError,
      last_checked_at: iso(node.lastCheckedAt),
      last_report_at: iso(node.lastReportAt),
      created_at: node.createdAt.toISOString(),
    };
  }
}

export class NodePageResponse {
  @ApiProperty({ type: [NodeResponse] }) items: NodeResponse[];
  @ApiProperty({ type: String, nullable: true }) next_cursor: string | null;
}

export class NodeWorkAcceptedResponse {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ enum: PROVISION_STATES }) provision_state: ProvisionState;
}

/**
 * Each node's entry serialized up to its token's value (`…,"session_token":"`), once per node list:
 * concurrent routing requests share one list (see `RoutingService`), and only the tokens differ.
 */
const entryHeads = new WeakMap<readonly RoutingNode[], string[]>();

export class RoutingEntryResponse {
  @ApiProperty({ format: 'uuid' }) node_id: string;
  @ApiProperty() name: string;
  @ApiProperty() tunnel_host: string;
  @ApiProperty() tunnel_port: number;
  @ApiProperty({ example: 'vless' }) tunnel_protocol: string;
  @ApiProperty({ example: 'xtls-rprx-vision' }) tunnel_flow: string;
  @ApiProperty() tunnel_short_id: string;
  @ApiProperty() public_key: string;
  @ApiProperty() sni_domain: string;
  @ApiProperty({ description: 'one-time token for this node, valid SESSION_TOKEN_TTL_S' })
  session_token: string;

  static from(node: RoutingNode, sessionToken: string): RoutingEntryResponse {
    return {
      node_id: node.id,
      name: node.name,
      tunnel_host: node.host,
      tunnel_port: node.tunnelPort,
      tunnel_protocol: node.tunnelProtocol,
      tunnel_flow: node.tunnelFlow,
      tunnel_short_id: node.shortId,
      public_key: node.publicKey,
      sni_domain: node.sniDomain,
      session_token: sessionToken,
    };
  }

  /**
   * The answer's JSON text, the same as `JSON.stringify` of every node's `from`: the node parts
   * are serialized once per shared list, and each request adds its tokens, which are JSON-safe as
   * they are (base64url, UUIDs, digits and dots; see `SessionTokens`).
   */
  static serialize(nodes: readonly RoutingNode[], sessionTokens: readonly string[]): string {
    let heads = entryHeads.get(nodes);
    if (!heads) {
      // `"session_token":""}` is last: cut its closing quote and brace.
      heads = nodes.map((node) => JSON.stringify(RoutingEntryResponse.from(node, '')).slice(0, -2));
      entryHeads.set(nodes, heads);
    }
    let text = '[';
    for (let i = 0; i < heads.length; i++) {
      text += `${i === 0 ? '' : ','}${heads[i]}${sessionTokens[i]}"}`;
    }
    return `${text}]`;
  }
}
