/**
 * ROUTING_NODES_MAX: with a bound, each user's routing list is that many of the online nodes, the
 * same ones on every request, each with a token for that node, and users spread over the fleet.
 */
import type { AuthUser } from '../src/auth/guards/auth-user';
import { chooseNodes, idHash, RoutingService } from '../src/nodes/routing.service';
import { startTestApp, type TestApp } from './harness/app';
import { newUser, type TestUser } from './harness/factories';
import { createNode, subscribedUser } from './harness/nodes';

const NODES = 6;
const SHARE = 2;

describe('routing: a bounded share of a large fleet (ROUTING_NODES_MAX)', () => {
  let t: TestApp;
  let owner: TestUser;
  let nodeIds: string[];

  beforeAll(async () => {
    t = await startTestApp({ ROUTING_NODES_MAX: String(SHARE) });
    owner = await newUser(t, 'owner');
    const made = [];
    for (let i = 0; i < NODES; i++) made.push(await createNode(t, owner, { name: `share-${i}` }));
    nodeIds = made.map((node) => node.id);
    await t.dataSource.query(
      `UPDATE nodes SET status = 'online', provision_state = 'ready' WHERE id = ANY($1::uuid[])`,
      [nodeIds],
    );
  });
  afterAll(() => t.close());

  const routing = async (user: TestUser) => {
    const response = await t.http().get('/api/v1/nodes/routing').set(user.bearer);
    expect(response.status).toBe(200);
    return response.body as { node_id: string; name: string; session_token: string }[];
  };

  it('answers the same share of the nodes each time, in name order, a token for each node', async () => {
    const user = await subscribedUser(t);
    const first = await routing(user);
    expect(first).toHaveLength(SHARE);
    expect(first.map((e) => e.name)).toEqual([...first.map((e) => e.name)].sort());
    for (const entry of first) {
      expect(nodeIds).toContain(entry.node_id);
      // vst2.<user id>.<node id>.<expiry>.<nonce>.<tag>
      expect(entry.session_token.split('.').slice(1, 3)).toEqual([user.user.id, entry.node_id]);
    }
    const again = await routing(user);
    expect(again.map((e) => e.node_id)).toEqual(first.map((e) => e.node_id));
    expect(again.map((e) => e.session_token)).not.toEqual(first.map((e) => e.session_token));
  });

  it('answers one bucket the same list while the nodes stay the same, so its JSON is built once', async () => {
    const user = await subscribedUser(t);
    const caller = { id: user.user.id } as AuthUser;
    const routingService = t.app.get(RoutingService);
    const first = await routingService.routing(caller);
    const again = await routingService.routing(caller);
    expect(again.nodes).toBe(first.nodes);
    expect(again.sessionTokens).not.toEqual(first.sessionTokens);
  });

  it('a node that goes offline is replaced in its users’ lists; the others keep theirs', async () => {
    const user = await subscribedUser(t);
    const before = (await routing(user)).map((e) => e.node_id);
    await t.dataSource.query(`UPDATE nodes SET status = 'offline' WHERE id = $1`, [before[0]]);
    try {
      const after = (await routing(user)).map((e) => e.node_id);
      expect(after).toHaveLength(SHARE);
      expect(after).not.toContain(before[0]);
      expect(after).toContain(before[1]);
    } finally {
      await t.dataSource.query(`UPDATE nodes SET status = 'online' WHERE id = $1`, [before[0]]);
    }
  });

  it('spreads users evenly: 6,000 users choosing 2 of 60 nodes give each node 200 ± 60', () => {
    const nodes = Uint32Array.from({ length: 60 }, (_, i) => idHash(`node-${i}`));
    const counts = new Array<number>(nodes.length).fill(0);
    for (let u = 0; u < 6_000; u++) {
      const chosen = chooseNodes(idHash(`user-${u}`), nodes, 2);
      expect(new Set(chosen).size).toBe(2);
      for (const i of chosen) counts[i] += 1;
    }
    expect(Math.min(...counts)).toBeGreaterThan(140);
    expect(Math.max(...counts)).toBeLessThan(260);
  });
});
