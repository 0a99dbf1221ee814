import { isIPv6 } from 'node:net';
import { ApiProperty } from '@nestjs/swagger';
import {
  NODE_STATUSES,
  type NodeStatus,
  PROVISION_STATES,
  type ProvisionState,
} from '../entities/node.entity';
import { shownStatus } from '../node-status';
import type { NodeRecord, NodeTrafficDayFigures, RoutingNode } from '../nodes.repository';

const iso = (value: Date | null): string | null => (value === null ? null : value.toISOString());

/** Where the node's agent admits clients: `https://<tunnel_host>:<admission_port>/v1/sessions`. */
export function admissionUrl(tunnelHost: string, admissionPort: number): string {
  const host = isIPv6(tunnelHost) ? `[${tunnelHost}]` : tunnelHost;
  return `https://${host}:${admissionPort}/v1/sessions`;
}

const CERT_SHA256 = {
  description: "hex SHA-256 of the DER of the agent's certificate, lower case: clients pin it",
  pattern: '^[0-9a-f]{64}$',
};

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
  @ApiProperty({ minimum: 1, maximum: 65535 }) admission_port: number;
  @ApiProperty({
    ...CERT_SHA256,
    type: String,
    nullable: true,
    description: `${CERT_SHA256.description}; null on a node made before the agent until it is provisioned`,
  })
  admission_cert_sha256: string | null;
  @ApiProperty({
    enum: NODE_STATUSES,
    description:
      'online only when provisioned, the tunnel port answers and the agent reported within two ' +
      'report periods; unknown when it was never provisioned or its agent is silent',
  })
  status: NodeStatus;
  @ApiProperty({ enum: PROVISION_STATES }) provision_state: ProvisionState;
  @ApiProperty({ type: String, nullable: true }) last_error: string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  last_checked_at: string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  last_report_at: string | null;
  @ApiProperty({ format: 'date-time' }) created_at: string;

  static from(node: NodeRecord, now = new Date()): NodeResponse {
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
      admission_port: node.admissionPort,
      admission_cert_sha256: node.admissionCertSha256,
      status: shownStatus(node, now),
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

export class NodeTrafficDayResponse {
  @ApiProperty({ format: 'date', example: '2026-11-24', description: 'a UTC day' })
  date: string;

  @ApiProperty({ description: 'bytes from users that day, as the node reported them' })
  bytes_up: number;

  @ApiProperty({ description: 'bytes to users that day, as the node reported them' })
  bytes_down: number;

  @ApiProperty({
    description: "bytes counted against users' limits that day (after traffic_multiplier)",
  })
  bytes_counted: number;
}

/** A node's traffic per UTC day: the days the node reported nothing are zeros. */
export class NodeTrafficResponse {
  @ApiProperty({
    type: [NodeTrafficDayResponse],
    description: 'one entry per UTC day, oldest first',
  })
  days: NodeTrafficDayResponse[];

  static from(days: NodeTrafficDayFigures[]): NodeTrafficResponse {
    return {
      days: days.map((day) => ({
        date: day.date,
        bytes_up: Number(day.bytesUp),
        bytes_down: Number(day.bytesDown),
        bytes_counted: Number(day.bytesCounted),
      })),
    };
  }
}

export class NodeWorkAcceptedResponse {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ enum: PROVISION_STATES }) provision_state: ProvisionState;
}

/**
 * Each node's entry serialized around its token's value (up to `…,"session_token":"` and from the
 * closing quote on), once per node: with ROUTING_NODES_MAX every node is in the lists of about
 * `SHARE_BUCKETS × ROUTING_NODES_MAX / nodes` share buckets, and one text each would keep 80,000
 * copies (35 MB) in memory, whatever the number of nodes.
 */
const nodeParts = new WeakMap<RoutingNode, { head: string; tail: string }>();
/**
 * The parts of a whole node list, in order: routing answers the same list (the same array) to every
 * request that shares a read, or of the same share bucket with ROUTING_NODES_MAX (see
 * `RoutingService`), and only the tokens differ.
 */
const entryParts = new WeakMap<readonly RoutingNode[], { heads: string[]; tails: string[] }>();
const TOKEN_FIELD = '"session_token":"';

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
  @ApiProperty({
    example: 'https://node-1.example.com:8443/v1/sessions',
    description:
      "the node agent's admission URL: POST {session_token} there, over TLS pinned by admission_cert_sha256",
  })
  admission_url: string;
  @ApiProperty(CERT_SHA256) admission_cert_sha256: string;

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
      admission_url: admissionUrl(node.host, node.admissionPort),
      admission_cert_sha256: node.admissionCertSha256,
    };
  }

  /**
   * The answer's JSON text, the same as `JSON.stringify` of every node's `from`: the node parts
   * are serialized once per shared list, and each request adds its tokens, which are JSON-safe as
   * they are (base64url, UUIDs, digits and dots; see `SessionTokens`).
   */
  static serialize(nodes: readonly RoutingNode[], sessionTokens: readonly string[]): string {
    let parts = entryParts.get(nodes);
    if (!parts) {
      parts = { heads: [], tails: [] };
      for (const node of nodes) {
        const { head, tail } = splitEntry(node);
        parts.heads.push(head);
        parts.tails.push(tail);
      }
      entryParts.set(nodes, parts);
    }
    const { heads, tails } = parts;
    let text = '[';
    for (let i = 0; i < heads.length; i++) {
      text += `${i === 0 ? '' : ','}${heads[i]}${sessionTokens[i]}${tails[i]}`;
    }
    return `${text}]`;
  }
}

/** A node's entry without its token, split where the token goes (`nodeParts`). */
function splitEntry(node: RoutingNode): { head: string; tail: string } {
  let parts = nodeParts.get(node);
  if (!parts) {
    // The token field is the only one with an empty value: split there.
    const json = JSON.stringify(RoutingEntryResponse.from(node, ''));
    const at = json.indexOf(`${TOKEN_FIELD}"`) + TOKEN_FIELD.length;
    parts = { head: json.slice(0, at), tail: json.slice(at) };
    nodeParts.set(node, parts);
  }
  return parts;
}
