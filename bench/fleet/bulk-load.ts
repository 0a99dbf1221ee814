/**
 * Bulk-loads a `bench:fleet` fleet into the service's database, not through the API: accounts
 * with running monthly subscriptions (a rolling month's traffic reset each), a signed-in session
 * for each online account, and nodes that are registered, provisioned and online. Each table is
 * filled by `INSERT … SELECT … FROM generate_series` inside PostgreSQL: the rows are made where
 * they are stored, as fast as COPY and with nothing sent over the wire, in batches so that a
 * million accounts need neither much memory nor one huge transaction. Ids come from the formulas
 * of plan.ts, which the workers share.
 */
import { createHash } from 'node:crypto';
import { LinkTokens } from '../../src/devices/link-tokens';
import { SHARE_BUCKETS } from '../../src/devices/share';
import { chooseNodes, idHash } from '../../src/nodes/routing.service';
import { ROLLING_MONTH_DAYS } from '../../src/users/traffic-reset';
import type { Fixture } from '../lib/fixture';
import {
  type FleetScale,
  fleetDeviceSql,
  fleetHwidSql,
  fleetNodeHostSql,
  fleetNodeId,
  fleetNodeSecret,
  fleetNodeSql,
  fleetSessionSql,
  fleetUserId,
  fleetUserSql,
  onlineUsers,
} from './plan';

type Sql = Fixture['sql'];
const BATCH = 250_000;

/**
 * Accounts 1..users, subscribed to the demo plan `monthly` for 30 days, its traffic reset every
 * rolling month: the subscriptions started at minutes spread over the last 30 days, so that each
 * minute some reach their reset (about 23 a minute at a million accounts), as in a live service.
 */
export async function loadAccounts(sql: Sql, scale: FleetScale): Promise<void> {
  await sql(`UPDATE plans SET traffic_reset = 'rolling_month' WHERE name = 'monthly'`);
  for (let from = 1; from <= scale.users; from += BATCH) {
    const to = Math.min(scale.users, from + BATCH - 1);
    await sql(
      `INSERT INTO users (id, seed_hash, plan_name, subscription_expires_at, created_at,
                          subscription_started_at, traffic_reset_at)
       SELECT ${fleetUserSql('g')}, md5('fleet-seed-' || g), 'monthly',
              now() + interval '30 days', now() - interval '60 days',
              s.started, s.started + make_interval(days => ${ROLLING_MONTH_DAYS})
         FROM generate_series($1::int, $2::int) g,
              LATERAL (SELECT now() - make_interval(
                mins => ((g::bigint * 7919) % ${ROLLING_MONTH_DAYS * 1440})::int) AS started) s`,
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

/**
 * What the apps of the online accounts already have: one device each, known by its HWID (as the
 * service makes it on the app's first fetch of the link), and the account's subscription link at
 * version 0, whose token is derived from SEED_PEPPER as the service derives it (only its SHA-256 is
 * stored). So a fetch of the link finds its device, as in a fleet past its first day.
 */
export async function loadDevicesAndLinks(
  sql: Sql,
  scale: FleetScale,
  seedPepper: string,
): Promise<void> {
  const online = onlineUsers(scale);
  const tokens = new LinkTokens(seedPepper);
  for (let from = 1; from <= online; from += BATCH) {
    const to = Math.min(online, from + BATCH - 1);
    await sql(
      `INSERT INTO devices (id, user_id, share_bucket, name, source, hwid_sha256, client, created_at, last_fetch_at)
       SELECT ${fleetDeviceSql('g')}, ${fleetUserSql('g')}, share_bucket_of(${fleetUserSql('g')}),
              'Android phone', 'hwid', sha256(${fleetHwidSql('g')}::bytea), 'v2rayNG/1.8.5',
              now() - interval '30 days', now() - interval '1 hour'
         FROM generate_series($1::int, $2::int) g`,
      [from, to],
    );
    const hashes = Array.from({ length: to - from + 1 }, (_, i) =>
      createHash('sha256')
        .update(tokens.account(fleetUserId(from + i), 0))
        .digest('hex'),
    );
    await sql(
      `INSERT INTO subscription_links (token_sha256, user_id, version)
       SELECT decode(h, 'hex'), ${fleetUserSql('g')}, 0
         FROM unnest($3::text[]) WITH ORDINALITY AS x(h, o), LATERAL (SELECT $1::int + o::int - 1 AS g) AS n
        WHERE g <= $2`,
      [from, to, hashes],
    );
  }
}

/**
 * The nodes' credential sets as already in sync at the present version: each node's share of the
 * users' buckets as the service names it (src/nodes/routing.service.ts: rendezvous hashing of
 * `bucket:<n>` over the nodes' id hashes, ROUTING_NODES_MAX nodes a bucket; the share named by
 * the SHA-256 of its buckets as 16-bit numbers), recorded in `node_credential_shares`. A node
 * that then asks from that version gets only what changed since, as in a fleet that has run for
 * a while, instead of its whole set. Were the naming to drift from the service's, every node's
 * first question would get its whole set: slower warm-up minutes, the same measured ones.
 */
export async function loadCredentialShares(
  sql: Sql,
  scale: FleetScale,
  routingNodesMax: number,
): Promise<void> {
  const ids = Array.from({ length: scale.nodes }, (_, i) => fleetNodeId(i + 1));
  const every = routingNodesMax === 0 || scale.nodes <= routingNodesMax;
  const hashes = Uint32Array.from(ids, (id) => idHash(id));
  const buckets = ids.map((): number[] => []);
  for (let bucket = 0; bucket < SHARE_BUCKETS; bucket += 1) {
    const share = every
      ? ids.map((_, i) => i)
      : chooseNodes(idHash(`bucket:${bucket}`), hashes, routingNodesMax);
    for (const i of share) buckets[i].push(bucket);
  }
  const names = buckets.map((list) =>
    !every
      ? createHash('sha256').update(Uint16Array.from(list)).digest('base64url').slice(0, 22)
      : 'all',
  );
  await sql(
    `INSERT INTO node_credential_shares (node_id, share_hash, since_version)
     SELECT id, name, (SELECT version FROM credentials_version)
       FROM unnest($1::uuid[], $2::text[]) AS x(id, name)`,
    [ids, names],
  );
}
