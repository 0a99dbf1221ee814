/**
 * Bulk-loads a `bench:fleet` fleet into the service's database, not through the API: accounts
 * with running monthly subscriptions, a signed-in session for each online account, and nodes that
 * are registered, provisioned and online. Each table is filled by `INSERT … SELECT … FROM
 * generate_series` inside PostgreSQL: the rows are made where they are stored, as fast as COPY and
 * with nothing sent over the wire, in batches so that a million accounts need neither much memory
 * nor one huge transaction. Ids come from the formulas of plan.ts, which the workers share.
 */
import { createHash } from 'node:crypto';
import type { Fixture } from '../lib/fixture';
import {
  type FleetScale,
  fleetNodeHostSql,
  fleetNodeSecret,
  fleetNodeSql,
  fleetSessionSql,
  fleetUserSql,
  onlineUsers,
} from './plan';

type Sql = Fixture['sql'];
const BATCH = 250_000;

/** Accounts 1..users, subscribed to the demo plan `monthly` for 30 days. */
export async function loadAccounts(sql: Sql, scale: FleetScale): Promise<void> {
  for (let from = 1; from <= scale.users; from += BATCH) {
    const to = Math.min(scale.users, from + BATCH - 1);
    await sql(
      `INSERT INTO users (id, seed_hash, plan_name, subscription_expires_at, created_at)
       SELECT ${fleetUserSql('g')}, md5('fleet-seed-' || g), 'monthly',
              now() + interval '30 days', now() - interval '60 days'
         FROM generate_series($1::int, $2::int) g`,
      [from, to],
    );
  }
  const online = onlineUsers(scale);
  for (let from = 1; from <= online; from += BATCH) {
    const to = Math.min(online, from + BATCH - 1);
    await sql(
      `INSERT INTO refresh_sessions (id, user_id, family_id, token_hash, expires_at)
       SELECT ${fleetSessionSql('g')}, ${fleetUserSql('g')}, ${fleetSessionSql('g')},
              sha256(('fleet-refresh-' || g)::bytea), now() + interval '30 days'
         FROM generate_series($1::int, $2::int) g`,
      [from, to],
    );
  }
}

/**
 * Nodes 1..nodes, provisioned and online, each on its own loopback address with the harness's
 * tunnel and admission ports, one admission certificate for all (its SHA-256 pinned by clients).
 */
export async function loadNodes(
  sql: Sql,
  scale: FleetScale,
  ports: { tunnel: number; admission: number },
  admissionCertSha256: string,
): Promise<void> {
  const secretHashes = Array.from({ length: scale.nodes }, (_, i) =>
    createHash('sha256')
      .update(fleetNodeSecret(i + 1))
      .digest('hex'),
  );
  await sql(
    `INSERT INTO nodes (id, name, host, tunnel_port, admission_port, ssh_private_key_enc,
       short_ids, public_key, reality_private_key_enc, sni_domain, status, provision_state,
       admission_cert_pem, admission_cert_sha256, admission_key_enc, agent_secret_enc,
       agent_secret_sha256, last_checked_at)
     SELECT ${fleetNodeSql('g')}, 'fleet-' || lpad(g::text, 5, '0'), ${fleetNodeHostSql('g')},
            $2, $3, 'unused', ARRAY[left(md5('short-' || g), 16)],
            rtrim(translate(encode(sha256(('public-' || g)::bytea), 'base64'), '+/', '-_'), '='),
            'unused', 'www.example.com', 'online', 'ready', 'unused', $4, 'unused', 'unused',
            ($5::text[])[g], now()
       FROM generate_series(1, $1::int) g`,
    [scale.nodes, ports.tunnel, ports.admission, admissionCertSha256, secretHashes],
  );
}
