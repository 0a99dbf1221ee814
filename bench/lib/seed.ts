/**
 * What the hot-route benchmarks put in the service's database before measuring: demo plans (by
 * the service's own `--seed-demo`), online nodes, subscribers, and one-time session tokens signed
 * with the fixture's secret, so that the service under test (`node dist/main.js`) accepts them.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SessionTokens } from '../../src/nodes/session-token';
import { type Fixture, SERVICE_SECRETS } from './fixture';

type Sql = Fixture['sql'];

/** The demo plans (`monthly` among them), as `node dist/main.js --seed-demo` writes them. */
export function seedDemoPlans(env: Record<string, string>): Promise<void> {
  const main = join(__dirname, '..', '..', 'dist', 'main.js');
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [main, '--seed-demo'],
      { env: { ...process.env, ...env } },
      (error) => (error ? reject(error) : resolve()),
    );
  });
}

/** The secret of seeded node `n` (1-based), as its agent sends it in `X-Internal-Secret`. */
export const benchNodeSecret = (n: number): string =>
  createHash('sha256').update(`bench-node-secret-${n}`).digest('base64url');

/**
 * `count` nodes, online and provisioned, with fields of the sizes the service makes (a 43-character
 * public key, 16-hex-digit short ids, a certificate's SHA-256, a node secret's SHA-256, see
 * `benchNodeSecret`); their private keys are placeholders, never read here.
 */
export async function seedNodes(sql: Sql, count: number): Promise<string[]> {
  const secretHashes = Array.from({ length: count }, (_, i) =>
    createHash('sha256')
      .update(benchNodeSecret(i + 1))
      .digest('hex'),
  );
  const rows = await sql(
    `INSERT INTO nodes (name, host, ssh_private_key_enc, short_ids, public_key,
       reality_private_key_enc, sni_domain, status, provision_state, admission_cert_pem,
       admission_cert_sha256, admission_key_enc, agent_secret_enc, agent_secret_sha256)
     SELECT 'node-' || lpad(g::text, 3, '0'), '10.0.' || (g / 250) || '.' || (g % 250 + 1), 'unused',
            ARRAY[left(md5('short-' || g), 16), left(md5('short2-' || g), 16)],
            rtrim(translate(encode(sha256(('public-' || g)::bytea), 'base64'), '+/', '-_'), '='),
            'unused', 'www.example.com', 'online', 'ready', 'unused',
            encode(sha256(('certificate-' || g)::bytea), 'hex'), 'unused', 'unused', ($2::text[])[g]
       FROM generate_series(1, $1::int) g ORDER BY g RETURNING id`,
    [count, secretHashes],
  );
  return rows.map((row) => String(row.id));
}

/** A running monthly subscription for each of these users. */
export async function subscribe(sql: Sql, userIds: string[]): Promise<void> {
  await sql(
    `UPDATE users SET plan_name = 'monthly', subscription_expires_at = now() + interval '30 days'
      WHERE id = ANY($1::uuid[])`,
    [userIds],
  );
}

/** `count` plain accounts made in one statement. */
export async function seedAccounts(sql: Sql, count: number): Promise<string[]> {
  const rows = await sql(
    `INSERT INTO users (seed_hash) SELECT md5('bench-account-' || g) FROM generate_series(1, $1::int) g
     RETURNING id`,
    [count],
  );
  return rows.map((row) => String(row.id));
}

const sessionTokens = new SessionTokens(SERVICE_SECRETS.PROXY_TOKEN_SECRET);
let files = 0;

/** A request body for POST /internal/validate whose token was never validated before. */
export function freshTokenBody(userId: string, nodeId: string): string {
  const expiresAt = Math.floor(Date.now() / 1000) + 3600;
  return JSON.stringify({ token: sessionTokens.issue(userId, nodeId, expiresAt), node_id: nodeId });
}

/** A file in `dir` of `count` such bodies, one per line, for the users in turn. */
export function freshTokenBodies(
  dir: string,
  userIds: string[],
  nodeId: string,
  count: number,
): string {
  const lines = Array.from({ length: count }, (_, i) =>
    freshTokenBody(userIds[i % userIds.length], nodeId),
  );
  const file = join(dir, `tokens-${files++}.jsonl`);
  writeFileSync(file, lines.join('\n'));
  return file;
}
