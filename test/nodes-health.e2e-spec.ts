import type { NodeStatus } from '../src/nodes/entities/node.entity';
import { HealthService } from '../src/nodes/health.service';
import { Metrics } from '../src/metrics/metrics.service';
import { NODES_LOCKED_IN_ID_ORDER, NodesRepository } from '../src/nodes/nodes.repository';
import { NodesService } from '../src/nodes/nodes.service';
import { JOBS } from '../src/scheduler/intervals';
import { JobRunner } from '../src/scheduler/job-runner.service';
import { startTestApp, type TestApp } from './harness/app';
import { newUser, type TestUser } from './harness/factories';
import { metricValue, parseMetrics } from './harness/metrics';
import {
  closedPort,
  createNode,
  nodeBody,
  subscribedUser,
  tcpListener,
  waitFor,
} from './harness/nodes';

const PERIOD_MS = 1000;

describe('nodes: health checks', () => {
  let t: TestApp;
  let owner: TestUser;

  beforeAll(async () => {
    t = await startTestApp({ NODE_HEALTH_INTERVAL_S: '1' }, { schedule: true });
    owner = await newUser(t, 'owner');
  });
  afterAll(() => t.close());

  const statusOf = async (id: string): Promise<string> => {
    const [row] = (await t.dataSource.query(`SELECT status FROM nodes WHERE id = $1`, [id])) as {
      status: string;
    }[];
    return row.status;
  };

  /** Locked in id order, as the scheduled health check locks them, so the two queue. */
  const deleteNodes = async (ids: string[]): Promise<void> => {
    await t.dataSource.query(
      `UPDATE nodes SET deleted_at = now() WHERE id IN (${NODES_LOCKED_IN_ID_ORDER})`,
      [ids],
    );
  };

  it('online within two periods of its port answering, offline within two after it stops, and out of routing', async () => {
    const listener = await tcpListener();
    const node = await createNode(t, owner, { tunnel_port: listener.port });
    await t.dataSource.query(`UPDATE nodes SET provision_state = 'ready' WHERE id = $1`, [node.id]);
    const user = await subscribedUser(t);
    const inRouting = async (): Promise<boolean> => {
      const response = await t.http().get('/api/v1/nodes/routing').set(user.bearer);
      return (response.body as { node_id: string }[]).some((e) => e.node_id === node.id);
    };

    await waitFor(async () => (await statusOf(node.id)) === 'online', 2 * PERIOD_MS, 'online');
    expect(await inRouting()).toBe(true);
    const checked = (await t.http().get(`/api/v1/admin/nodes/${node.id}`).set(owner.bearer))
      .body as { last_checked_at: string | null };
    expect(checked.last_checked_at).not.toBeNull();

    await listener.close();
    await waitFor(async () => (await statusOf(node.id)) === 'offline', 2 * PERIOD_MS, 'offline');
    expect(await inRouting()).toBe(false);
  });

  it('300 nodes, answering and closed ports mixed, are all checked within one period', async () => {
    const listeners = await Promise.all(Array.from({ length: 150 }, () => tcpListener()));
    const closed = await Promise.all(Array.from({ length: 150 }, () => closedPort()));
    const nodes = t.app.get(NodesService);
    const made = await Promise.all(
      [...listeners.map((l) => l.port), ...closed].map((port) =>
        nodes.create(owner.user.id, { ...nodeBody(), tunnel_port: port }),
      ),
    );
    try {
      const run = await t.app.get(HealthService).checkAll();
      expect(run.checked).toBeGreaterThanOrEqual(300);
      expect(run.durationMs).toBeLessThan(PERIOD_MS);
      const rows = (await t.dataSource.query(
        `SELECT id, status FROM nodes WHERE id = ANY($1::uuid[])`,
        [made.map((n) => n.id)],
      )) as { id: string; status: string }[];
      const byId = new Map(rows.map((row) => [row.id, row.status]));
      made.forEach((node, i) => expect(byId.get(node.id)).toBe(i < 150 ? 'online' : 'offline'));
    } finally {
      await Promise.all(listeners.map((l) => l.close()));
      await deleteNodes(made.map((n) => n.id));
    }
  });

  it('a round of health results and a traffic batch over the same nodes queue instead of deadlocking', async () => {
    const nodes = t.app.get(NodesService);
    const ports = await Promise.all(Array.from({ length: 200 }, () => closedPort()));
    const made = await Promise.all(
      ports.map((port) => nodes.create(owner.user.id, { ...nodeBody(), tunnel_port: port })),
    );
    const ids = made.map((n) => n.id);
    const sorted = [...ids].sort();
    const repository = t.app.get(NodesRepository);
    try {
      // Each round locks every one of the 200 rows from both sides at once; rows locked in two
      // different orders deadlock within a few rounds.
      for (let round = 0; round < 15; round++) {
        const statuses = ids.map((_, i): NodeStatus =>
          (i + round) % 2 === 0 ? 'online' : 'offline',
        );
        await Promise.all([
          repository.recordHealth(ids, statuses),
          repository.addNodeDays(
            sorted.map((nodeId) => ({ nodeId, up: 1n, down: 1n, counted: 2n })),
          ),
          repository.recordHealth([...ids].reverse(), [...statuses].reverse()),
        ]);
      }
      const [{ counted }] = (await t.dataSource.query(
        `SELECT sum(bytes_counted)::text AS counted FROM node_traffic_days WHERE node_id = ANY($1::uuid[])`,
        [ids],
      )) as { counted: string }[];
      expect(counted).toBe(String(200 * 15 * 2));
    } finally {
      await deleteNodes(ids);
    }
  });

  it('a deleted node is not checked any more', async () => {
    const listener = await tcpListener();
    const node = await createNode(t, owner, { tunnel_port: listener.port });
    await t.http().delete(`/api/v1/admin/nodes/${node.id}`).set(owner.bearer).expect(204);
    await t.app.get(HealthService).checkAll();
    const [row] = (await t.dataSource.query(
      `SELECT status, last_checked_at FROM nodes WHERE id = $1`,
      [node.id],
    )) as { status: string; last_checked_at: Date | null }[];
    expect(row).toEqual({ status: 'unknown', last_checked_at: null });
    await listener.close();
  });

  it('two instances on one database never check the same period twice, and miss none', async () => {
    const second = await startTestApp(
      { NODE_HEALTH_INTERVAL_S: '1' },
      { schedule: true, database: t.database },
    );
    try {
      const checks = [t.app.get(HealthService), second.app.get(HealthService)];
      const instances = [t.app.get(JobRunner).instance, second.app.get(JobRunner).instance];
      const [{ since }] = (await t.dataSource.query(`SELECT now() AS since`)) as { since: Date }[];
      const before = checks.map((health) => health.runs.length);
      await new Promise((resolve) => setTimeout(resolve, 4.5 * PERIOD_MS));
      const checked = checks.reduce((sum, health, i) => sum + health.runs.length - before[i], 0);
      const runs = (await t.dataSource.query(
        `SELECT period_start::text AS period, instance, outcome FROM job_runs
          WHERE job = $1 AND started_at >= $2 ORDER BY id`,
        [JOBS.nodeHealth.name, since],
      )) as { period: string; instance: string; outcome: string | null }[];

      // Each period run once, by one of the two, and every check made was such a run.
      expect(new Set(runs.map((run) => run.period)).size).toBe(runs.length);
      expect(runs.every((run) => instances.includes(run.instance))).toBe(true);
      expect(runs.filter((run) => run.outcome !== null && run.outcome !== 'ok')).toEqual([]);
      // A check may straddle the start or the end of the measurement: one at each end.
      expect(Math.abs(runs.length - checked)).toBeLessThanOrEqual(2);
      // None lost: 4.5 periods hold at least four whole ones.
      expect(runs.length).toBeGreaterThanOrEqual(4);
      expect(runs.length).toBeLessThanOrEqual(6);

      // Both instances kept ticking; what one ran, the other found done (or locked).
      const ticks = await Promise.all(
        [t, second].map(async (app) => {
          const samples = parseMetrics(await app.app.get(Metrics).registry.metrics());
          const count = (outcome: string) =>
            metricValue(samples, 'vpn_job_runs_total', { job: JOBS.nodeHealth.name, outcome });
          return { ran: count('ok'), skipped: count('skipped') };
        }),
      );
      for (const tick of ticks) expect(tick.ran + tick.skipped).toBeGreaterThanOrEqual(8);
      const [{ ok }] = (await t.dataSource.query(
        `SELECT count(*)::int AS ok FROM job_runs WHERE job = $1 AND outcome = 'ok'`,
        [JOBS.nodeHealth.name],
      )) as { ok: number }[];
      expect(Math.abs(ticks[0].ran + ticks[1].ran - ok)).toBeLessThanOrEqual(1);
    } finally {
      await second.close();
    }
  });
});
