/**
 * At the fleet's scale: 5,000 registered nodes (bulk-loaded), each user's share 20 of them. A node
 * whose set did not change is answered in under 5 ms at p99; a change to one user's device nudges
 * exactly the 20 nodes of its share, and each of them (and no other) gets it. A change of the node
 * list has every node's share worked out again without holding other requests meanwhile.
 */
import * as http from 'node:http';
import { CredentialsNudger } from '../src/devices/credentials-nudger';
import { type NodeShare, RoutingService } from '../src/nodes/routing.service';
import { startTestApp, type TestApp } from './harness/app';
import { newUser, savePlan, type TestUser } from './harness/factories';
import { closedPort, createNode, subscribedUser } from './harness/nodes';

const NODES = 5_000;
const SHARE = 20;
const USERS = 2_000;

jest.setTimeout(120_000);

describe('credentials at the scale of 5,000 nodes', () => {
  let t: TestApp;
  let owner: TestUser;
  let nudger: CredentialsNudger;
  let nodeIds: string[];

  beforeAll(async () => {
    t = await startTestApp({ ROUTING_NODES_MAX: String(SHARE) });
    owner = await newUser(t, 'owner');
    await savePlan(t, owner);
    nudger = t.app.get(CredentialsNudger);
    // One node made as staff make them; the rest copies of it, as a bulk load would make them.
    // Their agents cannot be reached (a closed port): a nudge fails at once, as to a node that is down.
    const template = await createNode(t, owner, { name: 'bulk-0' });
    await t.dataSource.query(
      `UPDATE nodes SET status = 'online', provision_state = 'ready', admission_port = $2 WHERE id = $1`,
      [template.id, await closedPort()],
    );
    await t.dataSource.query(
      `INSERT INTO nodes
       SELECT (jsonb_populate_record(NULL::nodes, to_jsonb(n) || jsonb_build_object(
                 'id', gen_random_uuid(), 'name', 'bulk-' || g, 'agent_secret_sha256', NULL))).*
         FROM nodes n, generate_series(1, $2::int - 1) g WHERE n.id = $1`,
      [template.id, NODES],
    );
    nodeIds = ((await t.dataSource.query(`SELECT id FROM nodes`)) as { id: string }[]).map(
      (row) => row.id,
    );
    expect(nodeIds).toHaveLength(NODES);
    // Users with two devices each, spread over every bucket of users.
    await t.dataSource.query(
      `WITH made AS (
         INSERT INTO users (plan_name, subscription_expires_at)
         SELECT 'monthly', now() + interval '30 days' FROM generate_series(1, $1::int)
         RETURNING id
       )
       INSERT INTO devices (user_id, share_bucket, name, source)
       SELECT id, share_bucket_of(id), 'device ' || k, 'link' FROM made, generate_series(1, 2) k`,
      [USERS],
    );
    await nudger.tick();
  });
  afterAll(() => t.close());

  const get = (agent: http.Agent, path: string, headers: http.OutgoingHttpHeaders = {}) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const request = http.get(`${t.baseUrl}${path}`, { agent, headers }, (response) => {
        let body = '';
        response.on('data', (chunk: Buffer) => (body += chunk.toString()));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
      });
      request.on('error', reject);
    });
  const ask = (agent: http.Agent, nodeId: string, since: number) =>
    get(agent, `/api/v1/internal/credentials?node_id=${nodeId}&since=${since}`, {
      'X-Internal-Secret': t.settings.internalSecret,
    });

  it('answers a node whose set did not change in under 5 ms at p99', async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const node = nodeIds[17];
    const first = await ask(agent, node, 0);
    expect(first.status).toBe(200);
    const whole = JSON.parse(first.body) as { version: number; full: boolean; upsert: unknown[] };
    expect(whole.full).toBe(true);
    // About USERS × 2 devices × 20 / 5,000 nodes.
    expect(whole.upsert.length).toBeGreaterThan(0);
    expect(whole.upsert.length).toBeLessThan(100);
    // Windows of 200 questions, each followed by one to GET /health: a single database round trip
    // through the whole pipeline and nothing of the credentials' work, asked one after the other
    // so that neither waits on the other's work. On a quiet machine the bound is the 5 ms; a shared
    // test machine stalls now and then (other test files run beside this one, PostgreSQL is
    // preempted), and where such stalls decide the p99 of any request the poll must be no slower
    // at p99 than that baseline in the same window. Up to 16 windows (a few seconds each).
    const windows: { p99: number; p50: number; baseline: number }[] = [];
    /** Quantile `q` of `sorted` (ascending). */
    const p = (sorted: number[], q: number) => sorted[Math.floor(sorted.length * q)];
    const healthy = (w: { p99: number; baseline: number }) => w.p99 < 5 || w.p99 <= w.baseline;
    for (let window = 0; window < 16; window++) {
      const times: number[] = [];
      const baseline: number[] = [];
      for (let i = 0; i < 200; i++) {
        let started = performance.now();
        const answer = await ask(agent, node, whole.version);
        times.push(performance.now() - started);
        expect(answer.status).toBe(200);
        started = performance.now();
        const health = await get(agent, '/api/v1/health');
        baseline.push(performance.now() - started);
        expect(health.status).toBe(200);
      }
      times.sort((a, b) => a - b);
      baseline.sort((a, b) => a - b);
      windows.push({ p99: p(times, 0.99), p50: p(times, 0.5), baseline: p(baseline, 0.99) });
      if (healthy(windows.at(-1)!)) break;
    }
    agent.destroy();
    expect(Math.min(...windows.map((w) => w.p50))).toBeLessThan(5);
    if (!windows.some(healthy)) {
      const seen = windows
        .map(
          (w) => `${w.p99.toFixed(1)} (p50 ${w.p50.toFixed(1)}, /health ${w.baseline.toFixed(1)})`,
        )
        .join(', ');
      throw new Error(`p99 ${seen} ms in each window of 200`);
    }
  });

  it('works out every node’s share again after a change of the list without holding other requests', async () => {
    const routing = t.app.get(RoutingService);
    const before = await routing.allNodeShares();
    await t.dataSource.query(`UPDATE nodes SET status = 'offline' WHERE id = $1`, [nodeIds[0]]);
    // What waits for the event loop (a request, say) waits at most as long as its longest turn.
    let longest = 0;
    let last = performance.now();
    const watch = setInterval(() => {
      const now = performance.now();
      longest = Math.max(longest, now - last);
      last = now;
    }, 1);
    let took: number;
    let shares: Map<string, NodeShare>;
    try {
      const started = performance.now();
      shares = await routing.allNodeShares();
      took = performance.now() - started;
      // The watch's turn after the last piece of the work.
      await new Promise((done) => setTimeout(done, 5));
    } finally {
      clearInterval(watch);
    }
    expect(shares).not.toBe(before);
    expect(shares.size).toBe(NODES - 1);
    expect(shares.has(nodeIds[0])).toBe(false);
    // Made in one piece, the longest turn was the whole work (about 200 ms in the service on a
    // 2-core VM, seconds under jest).
    if (longest >= Math.max(took / 4, 50)) {
      throw new Error(`one turn of ${longest.toFixed(0)} ms in the ${took.toFixed(0)} ms taken`);
    }
    // The nudger takes the new list in, as at its next round: the shares it sees are these.
    await nudger.tick();
  });

  it('a change to one user’s device nudges the 20 nodes of its share, and reaches each of them', async () => {
    const user = await subscribedUser(t);
    const routing = await t.http().get('/api/v1/nodes/routing').set(user.bearer).expect(200);
    const share = (routing.body as { node_id: string }[]).map((entry) => entry.node_id);
    expect(share).toHaveLength(SHARE);
    const agent = new http.Agent({ keepAlive: true });
    const versionOf = async (id: string) =>
      (JSON.parse((await ask(agent, id, 0)).body) as { version: number }).version;
    const outside = nodeIds.filter((id) => !share.includes(id)).slice(0, 20);
    const before = new Map<string, number>();
    for (const id of [...share, ...outside]) before.set(id, await versionOf(id));

    const made = await t
      .http()
      .post('/api/v1/users/me/devices')
      .set(user.bearer)
      .send({ name: 'Phone' })
      .expect(201);
    expect(await nudger.tick()).toBe(SHARE);
    for (const id of share) {
      const answer = JSON.parse((await ask(agent, id, before.get(id)!)).body) as {
        full: boolean;
        upsert: { device_id: string }[];
      };
      expect(answer.full).toBe(false);
      expect(answer.upsert.map((c) => c.device_id)).toEqual([made.body.device.id]);
    }
    for (const id of outside) {
      const answer = JSON.parse((await ask(agent, id, before.get(id)!)).body) as {
        upsert: unknown[];
      };
      expect(answer.upsert).toEqual([]);
    }
    agent.destroy();
  });
});
