/**
 * GET /admin/nodes/{id}/traffic: a node's bytes per UTC day, as the console's chart shows them.
 * Today's figures come from a real traffic report through /internal/traffic (multiplier applied);
 * older days are seeded rows of the same table.
 */
import { randomUUID } from 'node:crypto';
import { NodeTrafficDay } from '../src/nodes/entities/node-traffic-day.entity';
import { startTestApp, type TestApp } from './harness/app';
import { newUser, type TestUser } from './harness/factories';
import { createNode } from './harness/nodes';

const API = '/api/v1';
const DAY = 86_400_000;

/** `YYYY-MM-DD` of the UTC day `ago` days before today. */
const dayAgo = (ago: number): string => new Date(Date.now() - ago * DAY).toISOString().slice(0, 10);

describe('GET /admin/nodes/{id}/traffic', () => {
  let t: TestApp;
  let owner: TestUser;

  beforeAll(async () => {
    t = await startTestApp();
    owner = await newUser(t, 'owner');
  });
  afterAll(() => t.close());

  const traffic = (id: string, query = '', who: TestUser = owner) =>
    t.http().get(`${API}/admin/nodes/${id}/traffic${query}`).set(who.bearer);

  it("answers the node's own days, today's from a real report, zeros where it carried nothing", async () => {
    const node = await createNode(t, owner, { traffic_multiplier: 2 });
    const other = await createNode(t, owner);
    const subscriber = await newUser(t, 'seed');
    const report = await t
      .http()
      .post(`${API}/internal/traffic`)
      .set({ 'X-Internal-Secret': t.settings.internalSecret })
      .send({
        node_id: node.id,
        report_id: randomUUID(),
        entries: [{ user_id: subscriber.user.id, bytes_up: 300, bytes_down: 700 }],
      });
    expect(report.status).toBe(200);
    await t.dataSource.getRepository(NodeTrafficDay).save([
      { nodeId: node.id, day: dayAgo(2), bytesUp: '10', bytesDown: '20', bytesCounted: '60' },
      // Another node's day and a day out of the span count for nothing here.
      { nodeId: other.id, day: dayAgo(2), bytesUp: '5', bytesDown: '5', bytesCounted: '10' },
      { nodeId: node.id, day: dayAgo(9), bytesUp: '1', bytesDown: '1', bytesCounted: '4' },
    ]);

    const response = await traffic(node.id, '?days=4');
    expect(response.status).toBe(200);
    const none = { bytes_up: 0, bytes_down: 0, bytes_counted: 0 };
    expect(response.body).toEqual({
      days: [
        { date: dayAgo(3), ...none },
        { date: dayAgo(2), bytes_up: 10, bytes_down: 20, bytes_counted: 60 },
        { date: dayAgo(1), ...none },
        { date: dayAgo(0), bytes_up: 300, bytes_down: 700, bytes_counted: 2000 },
      ],
    });
  });

  it('30 days by default and up to 366, one entry per day, oldest first', async () => {
    const node = await createNode(t, owner);
    const month = (await traffic(node.id).expect(200)).body.days as { date: string }[];
    expect(month.map((day) => day.date)).toEqual(
      Array.from({ length: 30 }, (_, i) => dayAgo(29 - i)),
    );
    const year = (await traffic(node.id, '?days=366').expect(200)).body.days as unknown[];
    expect(year).toHaveLength(366);
  });

  it.each(['0', '367', '-1', '1.5', 'abc', '7&days=8'])('?days=%s is a 400', async (days) => {
    const node = await createNode(t, owner);
    const response = await traffic(node.id, `?days=${days}`);
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ code: 'VALIDATION_FAILED' });
    expect(response.body.details[0]).toMatchObject({ field: 'days' });
  });

  it('an unknown or deleted node is a 404, a malformed id a 400', async () => {
    expect((await traffic(randomUUID())).body).toMatchObject({ code: 'NOT_FOUND' });
    const node = await createNode(t, owner);
    await t.http().delete(`${API}/admin/nodes/${node.id}`).set(owner.bearer).expect(204);
    const deleted = await traffic(node.id);
    expect([deleted.status, deleted.body.code]).toEqual([404, 'NOT_FOUND']);
    const malformed = await traffic('not-a-uuid');
    expect([malformed.status, malformed.body.code]).toEqual([400, 'VALIDATION_FAILED']);
  });

  it('node_manage: a moderator without node access and support are refused, one with it may read', async () => {
    const node = await createNode(t, owner);
    const [plain, granted, support, subscriber] = await Promise.all([
      newUser(t, 'moderator'),
      newUser(t, 'moderator', { canManageNodes: true }),
      newUser(t, 'support'),
      newUser(t, 'seed'),
    ]);
    for (const who of [plain, support, subscriber]) {
      const refused = await traffic(node.id, '', who);
      expect([refused.status, refused.body.code]).toEqual([403, 'FORBIDDEN']);
    }
    await traffic(node.id, '', granted).expect(200);
    await t.http().get(`${API}/admin/nodes/${node.id}/traffic`).expect(401);
  });
});
