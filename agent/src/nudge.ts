import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The service's nudge to a node (`POST /v1/credentials/nudge` on the admission port): "credentials
 * version `version` exists, fetch it". The body carries an HMAC-SHA256, keyed by the node's secret,
 * of `credentials-nudge:<node_id>:<version>`; only node:crypto is used here, so the service can
 * import this file to make the same mac.
 */
export function nudgeMac(secret: string, nodeId: string, version: number): string {
  return createHmac('sha256', Buffer.from(secret, 'utf8'))
    .update(`credentials-nudge:${nodeId}:${version}`, 'utf8')
    .digest('hex');
}

export type NudgeCheck =
  | { ok: true; version: number }
  | { ok: false; status: 400; reason: 'bad_request' }
  | { ok: false; status: 403; reason: 'forbidden' };

const HEX_MAC = /^[0-9a-f]{64}$/i;

/**
 * Checks a nudge's body: 400 unless it is `{node_id: string, version: whole number ≥ 0, mac:
 * string}`; 403 when it names another node or its mac is not the one this node's secret makes
 * (compared in constant time).
 */
export function checkNudge(body: unknown, secret: string, nodeId: string): NudgeCheck {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return badRequest();
  const { node_id, version, mac } = body as Record<string, unknown>;
  if (
    typeof node_id !== 'string' ||
    typeof mac !== 'string' ||
    typeof version !== 'number' ||
    !Number.isSafeInteger(version) ||
    version < 0
  ) {
    return badRequest();
  }
  if (node_id.toLowerCase() !== nodeId.toLowerCase() || !HEX_MAC.test(mac)) return forbidden();
  const expected = Buffer.from(nudgeMac(secret, node_id, version), 'hex');
  const given = Buffer.from(mac, 'hex');
  return timingSafeEqual(expected, given) ? { ok: true, version } : forbidden();
}

const badRequest = (): NudgeCheck => ({ ok: false, status: 400, reason: 'bad_request' });
const forbidden = (): NudgeCheck => ({ ok: false, status: 403, reason: 'forbidden' });
