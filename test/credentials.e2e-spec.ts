/**
 * GET /internal/credentials and the nudges: each node carries the device ids of the users whose
 * share names it, while they may connect; it gets what changed since its version, or its whole set
 * when it has none or its share moved; the nodes a change concerns are nudged at once, with a MAC
 * the agent checks (the agent's own `checkNudge`).
 */
import * as https from 'node:https';
import type { AddressInfo } from 'node:net';
import { Client } from 'pg';
import { checkNudge } from '../agent/src/nudge';
import { SecretBox } from '../src/common/secret-box';
import { CredentialsNudger } from '../src/devices/credentials-nudger';
import { CREDENTIALS_VERSION_SQL } from '../src/devices/credentials.repository';
import { ROUTING_VERSION_SQL } from '../src/nodes/nodes.repository';
import { startTestApp, type TestApp } from './harness/app';
import { newUser, savePlan, type TestUser } from './harness/factories';
import { createNode, nodeSecret, subscribedUser } from './harness/nodes';

const SHARE = 2;
const NODES = 4;

interface Answer {
  version: number;
  full: boolean;
  upsert: { device_id: string; user_id: string; vless_id: string; expires_at: string | null }[];
  remove: string[];
}

/** A node's agent as the service reaches it: its admission TLS, answering nudges. */
interface FakeAgent {
  nodeId: string;
  secret: string;
  nudges: number[];
  server: https.Server;
}

describe('the device ids each node carries', () => {
  let t: TestApp;
  let owner: TestUser;
  let nudger: CredentialsNudger;
  const agents = new Map<string, FakeAgent>();

  beforeAll(async () => {
    t = await startTestApp({ ROUTING_NODES_MAX: String(SHARE) });
    owner = await newUser(t, 'owner');
    await savePlan(t, owner);
    nudger = t.app.get(CredentialsNudger);
    const box = new SecretBox(t.settings.dataEncryptionKey);
    for (let i = 0; i < NODES; i++) {
      const { id } = await createNode(t, owner, { name: `cred-${i}` });
      const [row] = (await t.dataSource.query(
        `SELECT admission_cert_pem, admission_key_enc FROM nodes WHERE id = $1`,
        [id],
      )) as { admission_cert_pem: string; admission_key_enc: string }[];
      const agent: FakeAgent = {
        nodeId: id,
        secret: await nodeSecret(t, id),
        nudges: [],
        server: https.createServer({
          cert: row.admission_cert_pem,
          key: box.open(row.admission_key_enc),
        }),
      };
      agent.server.on('request', (request, response) => {
        let body = '';
        request.on('data', (chunk: Buffer) => (body += chunk.toString()));
        request.on('end', () => {
          const check = checkNudge(JSON.parse(body), agent.secret, agent.nodeId);
          if (request.url === '/v1/credentials/nudge' && check.ok) agent.nudges.push(check.version);
          response.writeHead(check.ok ? 204 : check.status).end();
        });
      });
      await new Promise<void>((resolve) => agent.server.listen(0, '127.0.0.1', resolve));
      const port = (agent.server.address() as AddressInfo).port;
      await t.dataSource.query(
        `UPDATE nodes SET status = 'online', provision_state = 'ready', admission_port = $2 WHERE id = $1`,
        [id, port],
      );
      agents.set(id, agent);
    }
    // The nudger's first round learns where things stand.
    await nudger.tick();
  });
  afterAll(async () => {
    for (const agent of agents.values()) agent.server.close();
    await t.close();
  });

  const ask = async (
    nodeId: string,
    since: number,
    secret?: string,
    to: TestApp = t,
  ): Promise<Answer> => {
    const response = await to
      .http()
      .get(`/api/v1/internal/credentials?node_id=${nodeId}&since=${since}`)
      .set('X-Internal-Secret', secret ?? agents.get(nodeId)!.secret);
    expect(response.status).toBe(200);
    return response.body as Answer;
  };

  /** The node ids of the user's share, from its routing list. */
  const shareOf = async (user: TestUser): Promise<string[]> => {
    const routing = await t.http().get('/api/v1/nodes/routing').set(user.bearer).expect(200);
    return (routing.body as { node_id: string }[]).map((entry) => entry.node_id);
  };

  const linkDevice = async (
    user: TestUser,
    name: string,
  ): Promise<{ id: string; vless: string }> => {
    const made = await t
      .http()
      .post('/api/v1/users/me/devices')
      .set(user.bearer)
      .send({ name })
      .expect(201);
    const [row] = await t.dataSource.query(`SELECT vless_id FROM devices WHERE id = $1`, [
      made.body.device.id,
    ]);
    return { id: made.body.device.id as string, vless: row.vless_id as string };
  };

  /** Every node's version now (a full answer each), to ask what changed after. */
  const versions = async (): Promise<Map<string, number>> => {
    const seen = new Map<string, number>();
    for (const id of agents.keys()) seen.set(id, (await ask(id, 0)).version);
    return seen;
  };

  it('a node gets its whole set first, then only what changed; the nodes of the share are nudged', async () => {
    const user = await subscribedUser(t);
    const share = await shareOf(user);
    expect(share).toHaveLength(SHARE);
    const before = await versions();
    for (const agent of agents.values()) agent.nudges.length = 0;

    const device = await linkDevice(user, 'Phone');
    expect(await nudger.tick()).toBe(SHARE);
    for (const [id, agent] of agents) {
      expect(agent.nudges.length).toBe(share.includes(id) ? 1 : 0);
      const answer = await ask(id, before.get(id)!);
      expect(answer.full).toBe(false);
      if (share.includes(id)) {
        expect(answer.version).toBe(agent.nudges[0]);
        expect(answer.upsert).toEqual([
          {
            device_id: device.id,
            user_id: user.user.id,
            vless_id: device.vless,
            expires_at: expect.any(String),
          },
        ]);
        // The whole set holds it too.
        const full = await ask(id, 0);
        expect(full.full).toBe(true);
        expect(full.upsert.map((c) => c.device_id)).toContain(device.id);
      } else {
        expect(answer.upsert).toEqual([]);
        expect((await ask(id, 0)).upsert.map((c) => c.device_id)).not.toContain(device.id);
      }
    }
    // Nothing changed since: an empty answer at the same version.
    const node = share[0];
    const now = await ask(node, 0);
    expect(await ask(node, now.version)).toEqual({
      version: now.version,
      full: false,
      upsert: [],
      remove: [],
    });
  });

  it('a removed device, a blocked, expired or used-up account: removed; unblocked: back', async () => {
    const user = await subscribedUser(t);
    const [node] = await shareOf(user);
    const removed = await linkDevice(user, 'Old phone');
    const kept = await linkDevice(user, 'Laptop');
    let version = (await ask(node, 0)).version;

    const expectChange = async (upsert: string[], remove: string[]) => {
      const answer = await ask(node, version);
      expect(answer.full).toBe(false);
      expect(answer.upsert.map((c) => c.device_id).sort()).toEqual(upsert.sort());
      expect(answer.remove.sort()).toEqual(remove.sort());
      version = answer.version;
    };

    await t.http().delete(`/api/v1/users/me/devices/${removed.id}`).set(user.bearer).expect(204);
    await expectChange([kept.id], [removed.id]);

    const admin = `/api/v1/admin/users/${user.user.id}`;
    await t.http().post(`${admin}/block`).set(owner.bearer).send({ reason: 'abuse' }).expect(200);
    await expectChange([], [kept.id]);
    await t.http().post(`${admin}/unblock`).set(owner.bearer).send({}).expect(200);
    await expectChange([kept.id], []);

    await t
      .http()
      .post(`${admin}/subscription`)
      .set(owner.bearer)
      .send({ days: -40, reason: 'refund' })
      .expect(200);
    await expectChange([], [kept.id]);
    await t
      .http()
      .post(`${admin}/subscription`)
      .set(owner.bearer)
      .send({ days: 30, reason: 'goodwill' })
      .expect(200);
    await expectChange([kept.id], []);

    // Traffic reported past the limit: the report itself takes the user out of the sets.
    await t
      .http()
      .patch(`${admin}/traffic-limit`)
      .set(owner.bearer)
      .send({ traffic_limit_bytes: 1000 })
      .expect(200);
    await expectChange([kept.id], []);
    const report = await t
      .http()
      .post('/api/v1/internal/traffic')
      .set('X-Internal-Secret', agents.get(node)!.secret)
      .send({
        node_id: node,
        report_id: crypto.randomUUID(),
        entries: [{ user_id: user.user.id, bytes_up: 600, bytes_down: 600 }],
      })
      .expect(200);
    expect(report.body.over_limit).toEqual([user.user.id]);
    await expectChange([], [kept.id]);
    await t
      .http()
      .post(`${admin}/traffic/reset`)
      .set(owner.bearer)
      .send({ reason: 'new month' })
      .expect(200);
    await expectChange([kept.id], []);
  });

  it('only the first device_limit devices are carried', async () => {
    const user = await subscribedUser(t);
    const [node] = await shareOf(user);
    const devices = [];
    for (let i = 0; i < 3; i++) devices.push(await linkDevice(user, `Device ${i}`));
    const carried = (await ask(node, 0)).upsert.map((c) => c.device_id);
    for (const device of devices) expect(carried).toContain(device.id);
    const version = (await ask(node, 0)).version;
    await t
      .http()
      .put('/api/v1/admin/plans/monthly')
      .set(owner.bearer)
      .send({
        duration_days: 30,
        traffic_limit_bytes: 107374182400,
        prices: { USD: '499' },
        active: true,
        device_limit: 2,
      })
      .expect(200);
    const answer = await ask(node, version);
    expect(answer.remove).toEqual([devices[2].id]);
    await t
      .http()
      .put('/api/v1/admin/plans/monthly')
      .set(owner.bearer)
      .send({
        duration_days: 30,
        traffic_limit_bytes: 107374182400,
        prices: { USD: '499' },
        active: true,
        device_limit: 3,
      })
      .expect(200);
  });

  it('a node whose share moved takes its whole set, and is nudged', async () => {
    const user = await subscribedUser(t);
    const share = await shareOf(user);
    await linkDevice(user, 'Phone');
    const before = await versions();
    await nudger.tick();
    for (const agent of agents.values()) agent.nudges.length = 0;
    // One node of the share goes offline: its users move to another node.
    await t.dataSource.query(`UPDATE nodes SET status = 'offline' WHERE id = $1`, [share[0]]);
    try {
      const nudged = await nudger.tick();
      expect(nudged).toBeGreaterThan(0);
      expect(agents.get(share[0])!.nudges).toHaveLength(1);
      const gone = await ask(share[0], before.get(share[0])!);
      expect(gone).toMatchObject({ full: true, upsert: [] });
      const after = await shareOf(user);
      const newcomer = after.find((id) => !share.includes(id))!;
      expect(agents.get(newcomer)!.nudges).toHaveLength(1);
      const taken = await ask(newcomer, before.get(newcomer)!);
      expect(taken.full).toBe(true);
      expect(taken.upsert.map((c) => c.user_id)).toContain(user.user.id);
    } finally {
      await t.dataSource.query(`UPDATE nodes SET status = 'online' WHERE id = $1`, [share[0]]);
      await nudger.tick();
    }
  });

  it('a node’s secret asks for its own node only; the query is checked', async () => {
    const [a, b] = [...agents.keys()];
    const refused = await t
      .http()
      .get(`/api/v1/internal/credentials?node_id=${b}&since=0`)
      .set('X-Internal-Secret', agents.get(a)!.secret);
    expect(refused.status).toBe(403);
    for (const since of ['-1', 'x', '1.5', '']) {
      const bad = await t
        .http()
        .get(`/api/v1/internal/credentials?node_id=${a}&since=${since}`)
        .set('X-Internal-Secret', agents.get(a)!.secret);
      expect(bad.status).toBe(400);
    }
    // The operator's own secret may ask for any node.
    await ask(b, 0, t.settings.internalSecret);
  });

  /** The transaction's own counts of `tables`: scans, key lookups and row updates, by table. */
  const ownCounts = async (client: Client, tables: string[]): Promise<unknown[]> =>
    (
      await client.query<{ table: string; seq: string; idx: string; upd: string }>(
        `SELECT relname AS table, seq_scan AS seq, idx_scan AS idx, n_tup_upd AS upd
           FROM pg_stat_xact_user_tables WHERE relname = ANY($1) ORDER BY relname`,
        [tables],
      )
    ).rows.map((r) => ({ table: r.table, seq: +r.seq, idx: +r.idx, upd: +r.upd }));

  /** `body` in a transaction of its own connection, rolled back. */
  const rolledBack = async <T>(body: (client: Client) => Promise<T>): Promise<T> => {
    const client = new Client({ connectionString: t.databaseUrl });
    await client.connect();
    try {
      await client.query('BEGIN');
      return await body(client);
    } finally {
      await client.query('ROLLBACK');
      await client.end();
    }
  };

  it('devices added or deleted by one statement move the counter once, a change for each', async () => {
    const user = await subscribedUser(t);
    const devices = 300;
    await rolledBack(async (client) => {
      const before = Number((await client.query(CREDENTIALS_VERSION_SQL)).rows[0].version);
      const { rows: added } = await client.query<{ id: string }>(
        `INSERT INTO devices (user_id, share_bucket, name, source, app)
         SELECT $1, share_bucket_of($1), 'Imported', 'app', 'import-' || g
           FROM generate_series(1, $2) g RETURNING id`,
        [user.user.id, devices],
      );
      await client.query(`DELETE FROM devices WHERE user_id = $1`, [user.user.id]);
      expect(await ownCounts(client, ['credentials_version'])).toEqual([
        { table: 'credentials_version', seq: expect.any(Number), idx: expect.any(Number), upd: 2 },
      ]);
      const { rows: changes } = await client.query<{ at: string; removed: string | null }>(
        `SELECT version::text AS at, removed_device_id AS removed FROM credential_changes
          WHERE version > $1 AND user_id = $2 ORDER BY version`,
        [before, user.user.id],
      );
      expect(changes.map((c) => Number(c.at))).toEqual(
        Array.from({ length: 2 * devices }, (_, i) => before + 1 + i),
      );
      expect(changes.slice(0, devices).every((c) => c.removed === null)).toBe(true);
      expect(
        changes
          .slice(devices)
          .map((c) => c.removed)
          .sort(),
      ).toEqual(added.map((d) => d.id).sort());
    });
  });

  it('the counters are read by their key, however many pages a mass change left them', async () => {
    const user = await subscribedUser(t);
    const [nodeId] = agents.keys();
    const moves = 5_000;
    // A mass update of accounts (each row's trigger moves the credentials counter), and a health
    // check changing many nodes' status (each a routing move), in one transaction each: every move
    // a row version, freed by VACUUM, the table as long as they made it.
    await t.dataSource.query(
      `SELECT count(record_credential_changes(ARRAY[$1::uuid], ARRAY[NULL::uuid]))
         FROM generate_series(1, $2)`,
      [user.user.id, moves],
    );
    await t.dataSource.query(`
      DO $$ BEGIN
        FOR i IN 1..${moves / 2} LOOP
          UPDATE nodes SET status = 'offline' WHERE id = '${nodeId}';
          UPDATE nodes SET status = 'online' WHERE id = '${nodeId}';
        END LOOP;
      END $$`);
    await t.dataSource.query(`VACUUM credentials_version, routing_version`);
    const pages = async (table: string): Promise<number> =>
      Number(
        (
          (await t.dataSource.query(`SELECT pg_relation_size($1) / 8192 AS pages`, [table])) as {
            pages: string;
          }[]
        )[0].pages,
      );
    expect(await pages('credentials_version')).toBeGreaterThan(20);
    expect(await pages('routing_version')).toBeGreaterThan(20);

    // What a node's credential poll and an app's routing read: one key lookup each, no scan.
    const counts = await rolledBack(async (client) => {
      await client.query(CREDENTIALS_VERSION_SQL);
      await client.query(ROUTING_VERSION_SQL);
      return ownCounts(client, ['credentials_version', 'routing_version']);
    });
    expect(counts).toEqual([
      { table: 'credentials_version', seq: 0, idx: 1, upd: 0 },
      { table: 'routing_version', seq: 0, idx: 2, upd: 0 },
    ]);
    // And a node's poll still answers.
    const now = await ask(nodeId, 0);
    expect(await ask(nodeId, now.version)).toMatchObject({ version: now.version, full: false });
  });

  // Last: a second application in this process takes over passport's strategies, and closing it
  // leaves the first one's sign-ins without theirs.
  it('an instance that answered polls from its reading of the change log sees what changed through another', async () => {
    const other = await startTestApp(
      { ROUTING_NODES_MAX: String(SHARE) },
      { database: t.database },
    );
    try {
      const user = await subscribedUser(t);
      const share = await shareOf(user);
      const elsewhere = [...agents.keys()].filter((id) => !share.includes(id));
      const start = new Map<string, number>();
      for (const id of agents.keys()) start.set(id, (await ask(id, 0)).version);
      const tablet = await linkDevice(user, 'Tablet');
      // The other instance's first reading of the log.
      const seen = new Map<string, number>();
      for (const id of agents.keys()) {
        const answer = await ask(id, start.get(id)!, undefined, other);
        expect(answer.upsert.map((c) => c.device_id)).toEqual(
          share.includes(id) ? [tablet.id] : [],
        );
        seen.set(id, answer.version);
      }
      // Made through the first instance, asked of the other: read from the log as it moved.
      const watch = await linkDevice(user, 'Watch');
      for (const id of agents.keys()) {
        const answer = await ask(id, seen.get(id)!, undefined, other);
        expect(answer.full).toBe(false);
        // The changed user's devices, all of them.
        expect(answer.upsert.map((c) => c.device_id).sort()).toEqual(
          share.includes(id) ? [tablet.id, watch.id].sort() : [],
        );
      }
      expect(elsewhere.length).toBeGreaterThan(0);
    } finally {
      await other.close();
    }
  });
});
