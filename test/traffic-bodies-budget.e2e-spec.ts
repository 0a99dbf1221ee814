/**
 * Traffic reports beyond LARGE_BODIES_IN_MEMORY wait, unread, for earlier ones to be answered:
 * all are still applied, each once, and none is refused.
 */
import { randomUUID } from 'node:crypto';
import { startTestApp, type TestApp } from './harness/app';
import { newUser } from './harness/factories';
import { createNode } from './harness/nodes';

describe('traffic reports over the in-memory byte budget', () => {
  let t: TestApp;
  beforeAll(async () => {
    // About two of the reports below at a time.
    t = await startTestApp({ LARGE_BODIES_IN_MEMORY: '40kb' });
  });
  afterAll(() => t.close());

  it('applies 20 reports sent at once (and a repeat), each once, none refused', async () => {
    const owner = await newUser(t, 'owner');
    const node = (await createNode(t, owner)).id;
    const user = await newUser(t, 'seed');
    const report = () => ({
      node_id: node,
      report_id: randomUUID(),
      entries: Array.from({ length: 200 }, () => ({
        user_id: user.user.id,
        bytes_up: 1,
        bytes_down: 2,
      })),
    });
    const reports = Array.from({ length: 20 }, report);
    expect(JSON.stringify(reports[0]).length).toBeGreaterThan(15_000);
    const answers = await Promise.all(
      [...reports, reports[0]].map((body) =>
        fetch(`${t.baseUrl}/api/v1/internal/traffic`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'x-internal-secret': t.settings.internalSecret,
          },
          body: JSON.stringify(body),
        }).then(async (response) => ({ status: response.status, body: await response.json() })),
      ),
    );
    expect(answers.map((answer) => answer.status)).toEqual(Array<number>(21).fill(200));
    const [row] = (await t.dataSource.query(
      `SELECT traffic_used_bytes::int AS used FROM users WHERE id = $1`,
      [user.user.id],
    )) as { used: number }[];
    // 20 distinct reports of 200 × 3 bytes; the repeat of the first applied nothing more.
    expect(row.used).toBe(20 * 200 * 3);
  });
});
