import { randomUUID } from 'node:crypto';
import { TransactionHost } from '@nestjs-cls/transactional';
import type { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { canonicalUuid } from '../src/common/uuid';
import { isDatabaseUnavailable } from '../src/database/postgres-errors';
import { InternalCleanupJob } from '../src/internal/internal.jobs';
import { COUNT_TRAFFIC_SQL, InternalRepository } from '../src/internal/internal.repository';
import { InternalService } from '../src/internal/internal.service';
import type { TrafficReport } from '../src/internal/traffic-report.pipe';
import { BIGINT_MAX } from '../src/common/byte-count';
import {
  ADD_TRAFFIC_SQL,
  ORDERED_JOINS,
  UserTrafficRepository,
} from '../src/users/user-traffic.repository';
import { Metrics } from '../src/metrics/metrics.service';
import { startTestApp, type TestApp } from './harness/app';
import { newUser, type TestUser } from './harness/factories';
import { metricValue, parseMetrics } from './harness/metrics';
import { createNode } from './harness/nodes';

/**
 * The counters' UPDATE visits the users in id order either way: a nested loop driven by the
 * sorted ids, users through their index, or a merge join of the primary key's index and the ids
 * sorted by id.
 */
const nestedLoop =
  /Nested Loop[\s\S]*Function Scan on v[\s\S]*Index Scan using \S+ on users u\w* .*\n\s+Index Cond: \(id = v\.id\)/;
const mergeJoin =
  /Merge Join[\s\S]*Merge Cond: \(u\w*\.id = v\.id\)[\s\S]*Index Scan using \S+ on users u\w*\s[\s\S]*Sort Key: v\.id/;
const eitherJoin = new RegExp(`${nestedLoop.source}|${mergeJoin.source}`);

interface Entry {
  user_id: string;
  bytes_up: number;
  bytes_down: number;
}

describe('internal: traffic reports count every byte exactly once', () => {
  let t: TestApp;
  let owner: TestUser;
  let secret: Record<string, string>;

  beforeAll(async () => {
    // Bursts here queue hundreds of thousands of entries on a shared test machine: a report is
    // not dropped for waiting (the deadline has its own test, database-lock).
    t = await startTestApp({ DB_POOL_WAIT_MS: '60000' });
    owner = await newUser(t, 'owner');
    secret = { 'X-Internal-Secret': t.settings.internalSecret };
  });
  afterAll(() => t.close());

  /** `count` plain accounts made in one statement (10,000 through factories would take minutes). */
  async function users(count: number): Promise<string[]> {
    const rows = (await t.dataSource.query(
      `INSERT INTO users (seed_hash) SELECT md5(random()::text || g) FROM generate_series(1, $1) g
       RETURNING id`,
      [count],
    )) as { id: string }[];
    return rows.map((row) => row.id);
  }

  async function used(ids: string[]): Promise<Map<string, number>> {
    const rows = (await t.dataSource.query(
      `SELECT id, traffic_used_bytes::text AS used FROM users WHERE id = ANY($1::uuid[])`,
      [ids],
    )) as { id: string; used: string }[];
    return new Map(rows.map((row) => [row.id, Number(row.used)]));
  }

  const send = (body: unknown) =>
    t
      .http()
      .post('/api/v1/internal/traffic')
      .set(secret)
      .send(body as object);

  /**
   * Test-only, in this test's own database: the `n`th insert into the nodes' daily figures fails
   * with SQLSTATE `state` (counted by the sequence `name`; drop the trigger `name` after).
   */
  const failNthDailyInsert = (name: string, n: number, state = 'P0001') =>
    t.dataSource.query(`
      CREATE SEQUENCE ${name};
      CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF nextval('${name}') = ${n} THEN
          RAISE EXCEPTION 'injected fault' USING ERRCODE = '${state}';
        END IF;
        RETURN NEW;
      END $$;
      CREATE TRIGGER ${name} BEFORE INSERT ON node_traffic_days
        FOR EACH ROW EXECUTE FUNCTION ${name}();
    `);

  /** `count` reports, each of one new user on a new node of its own. */
  async function oneUserReports(count: number) {
    const ids = await users(count);
    const nodes = await Promise.all(ids.map(() => newNode()));
    const report = (i: number): TrafficReport => ({
      nodeId: canonicalUuid(nodes[i])!,
      reportId: canonicalUuid(randomUUID())!,
      userIds: [canonicalUuid(ids[i])!],
      bytesUp: [i + 1],
      bytesDown: [0],
      devices: { deviceIds: [], userIds: [], bytesUp: [], bytesDown: [] },
      online: [],
    });
    return { ids, reports: ids.map((_, i) => report(i)) };
  }

  const sequenceValue = async (name: string): Promise<number> =>
    ((await t.dataSource.query(`SELECT last_value::int AS n FROM ${name}`)) as { n: number }[])[0]
      .n;

  const entry = (userId: string, bytes: number): Entry => ({
    user_id: userId,
    bytes_up: bytes,
    bytes_down: 0,
  });

  const newNode = async (multiplier = 1): Promise<string> =>
    (await createNode(t, owner, { traffic_multiplier: multiplier })).id;

  it('10,000 entries over 8 users add up exactly; a multiplier of 2 doubles them', async () => {
    const ids = await users(8);
    const plain = await newNode();
    const double = await newNode(2);
    const entries: Entry[] = Array.from({ length: 10_000 }, (_, i) => ({
      user_id: ids[i % 8],
      bytes_up: 1000 + i,
      bytes_down: 3 * i + 7,
    }));
    const expected = new Map(ids.map((id) => [id, 0]));
    for (const e of entries)
      expected.set(e.user_id, expected.get(e.user_id)! + e.bytes_up + e.bytes_down);

    const first = await send({ node_id: plain, report_id: randomUUID(), entries });
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ applied: true, over_limit: [], unknown_users: 0, close: [] });
    expect(Object.fromEntries(await used(ids))).toEqual(Object.fromEntries(expected));

    await send({ node_id: double, report_id: randomUUID(), entries }).expect(200);
    const after = await used(ids);
    for (const id of ids) expect(after.get(id)).toBe(3 * expected.get(id)!);

    // The raw bytes are kept per node and day, before the multiplier.
    const [day] = (await t.dataSource.query(
      `SELECT bytes_up::text AS up, bytes_down::text AS down, bytes_counted::text AS counted
         FROM node_traffic_days WHERE node_id = $1`,
      [double],
    )) as { up: string; down: string; counted: string }[];
    const raw = [...expected.values()].reduce((a, b) => a + b, 0);
    expect(Number(day.up) + Number(day.down)).toBe(raw);
    expect(Number(day.counted)).toBe(2 * raw);
    const node = (await t.http().get(`/api/v1/admin/nodes/${double}`).set(owner.bearer)).body as {
      last_report_at: string | null;
    };
    expect(node.last_report_at).not.toBeNull();
  });

  it('each entry counts (up + down) × multiplier rounded down', async () => {
    const [id] = await users(1);
    const node = await newNode(1.5);
    await send({
      node_id: node,
      report_id: randomUUID(),
      entries: [
        { user_id: id, bytes_up: 1, bytes_down: 0 }, // 1.5 → 1
        { user_id: id, bytes_up: 2, bytes_down: 1 }, // 4.5 → 4
      ],
    }).expect(200);
    expect((await used([id])).get(id)).toBe(5);
  });

  it("a node's new multiplier and a report sent again count as the record says, not as the last batch did", async () => {
    // Each batch counts on a guess of its record (its reports new, its node's multiplier as the
    // last batch read it); these are the cases where that guess is wrong.
    const [id] = await users(1);
    const node = await newNode(1);
    const recounted = async (): Promise<number> =>
      metricValue(
        parseMetrics(await t.app.get(Metrics).registry.metrics()),
        'vpn_traffic_batches_recounted_total',
      );
    const before = await recounted();
    const report = (bytes: number) => ({
      node_id: node,
      report_id: randomUUID(),
      entries: [entry(id, bytes)],
    });
    const first = report(100);
    await send(first).expect(200);
    expect((await used([id])).get(id)).toBe(100);

    await t
      .http()
      .patch(`/api/v1/admin/nodes/${node}`)
      .set(owner.bearer)
      .send({ traffic_multiplier: 2 })
      .expect(200);
    expect((await send(report(100)).expect(200)).body).toMatchObject({ applied: true });
    expect((await used([id])).get(id)).toBe(300);

    expect((await send(first).expect(200)).body).toMatchObject({ applied: false });
    expect((await used([id])).get(id)).toBe(300);
    expect((await send(report(100)).expect(200)).body).toMatchObject({ applied: true });
    expect((await used([id])).get(id)).toBe(500);
    // Counted again from its record: the report after the change, and the one sent again.
    expect((await recounted()) - before).toBe(2);

    const [day] = (await t.dataSource.query(
      `SELECT bytes_up::text AS up, bytes_counted::text AS counted
         FROM node_traffic_days WHERE node_id = $1`,
      [node],
    )) as { up: string; counted: string }[];
    expect(day).toEqual({ up: '300', counted: '500' });
  });

  it('figures past 2^53 are counted exactly, and a counter saturates at the bigint maximum', async () => {
    const [small, large, full] = await users(3);
    await t.dataSource.query(
      `UPDATE users SET traffic_used_bytes = 9223372036854775000 WHERE id = $1`,
      [full],
    );
    const node = await newNode(2);
    const most = Number.MAX_SAFE_INTEGER; // 2^53 - 1
    await send({
      node_id: node,
      report_id: randomUUID(),
      entries: [
        { user_id: small, bytes_up: 5, bytes_down: 0 },
        { user_id: large, bytes_up: most, bytes_down: most },
        { user_id: small, bytes_up: 7, bytes_down: 0 },
        { user_id: large, bytes_up: 1, bytes_down: 0 },
        { user_id: full, bytes_up: 500, bytes_down: 0 },
      ],
    }).expect(200);
    const rows = (await t.dataSource.query(
      `SELECT id, traffic_used_bytes::text AS used FROM users WHERE id = ANY($1::uuid[])`,
      [[small, large, full]],
    )) as { id: string; used: string }[];
    const counters = Object.fromEntries(rows.map((row) => [row.id, row.used]));
    const twice = (2n * (2n * BigInt(most) + 1n)).toString();
    expect(counters).toEqual({
      [small]: '24',
      [large]: twice,
      [full]: '9223372036854775807',
    });
    const [day] = (await t.dataSource.query(
      `SELECT bytes_up::text AS up, bytes_down::text AS down, bytes_counted::text AS counted
         FROM node_traffic_days WHERE node_id = $1`,
      [node],
    )) as { up: string; down: string; counted: string }[];
    expect(day).toEqual({
      up: (BigInt(most) + 513n).toString(),
      down: BigInt(most).toString(),
      counted: (24n + BigInt(twice) + 1000n).toString(),
    });

    // Entries worth more together than a counter holds (60 × 2^54 × 10) fill it, whatever it held.
    const [fresh] = await users(1);
    await send({
      node_id: await newNode(10),
      report_id: randomUUID(),
      entries: Array(60).fill({ user_id: fresh, bytes_up: most, bytes_down: most }),
    }).expect(200);
    const [counter] = (await t.dataSource.query(
      `SELECT traffic_used_bytes::text AS used FROM users WHERE id = $1`,
      [fresh],
    )) as { used: string }[];
    expect(counter.used).toBe(BIGINT_MAX.toString());
  });

  it('the same report_id delivered 20 times at once counts once', async () => {
    const ids = await users(3);
    const node = await newNode();
    const body = {
      node_id: node,
      report_id: randomUUID(),
      entries: ids.map((id) => ({ user_id: id, bytes_up: 100, bytes_down: 11 })),
    };
    const answers = await Promise.all(Array.from({ length: 20 }, () => send(body)));
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
    expect(answers.filter((a) => (a.body as { applied: boolean }).applied)).toHaveLength(1);
    for (const value of (await used(ids)).values()) expect(value).toBe(111);
    // The same report id from another node is another report.
    await send({ ...body, node_id: await newNode() }).expect(200);
    for (const value of (await used(ids)).values()) expect(value).toBe(222);
  });

  // One instance applies one batch at a time, so this cannot deadlock; the lock order that keeps
  // several instances apart is the next test's, with writers in transactions of their own.
  it('50 concurrent reports from 50 nodes over the same 10,000 users: no 5xx, exact totals', async () => {
    const ids = await users(10_000);
    const nodes = await Promise.all(Array.from({ length: 50 }, () => newNode()));
    const answers = await Promise.all(
      nodes.map((node, n) => {
        // Each node lists the users in its own order, so lock order is the service's job.
        const rotated = [...ids.slice(n * 200), ...ids.slice(0, n * 200)];
        return send({
          node_id: node,
          report_id: randomUUID(),
          entries: rotated.map((id) => ({ user_id: id, bytes_up: n, bytes_down: 1 })),
        });
      }),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(50).fill(200));
    const totals = await used(ids);
    const expected = Array.from({ length: 50 }, (_, n) => n + 1).reduce((a, b) => a + b, 0);
    for (const id of ids) expect(totals.get(id)).toBe(expected);
  }, 300_000);

  it('writers in separate transactions (as on several instances) add to the same users in any order and number without a deadlock', async () => {
    // One instance applies one batch at a time; instances share the database, so the lock order
    // of the counters' UPDATE itself is what keeps them from deadlocking. Writers of all the users
    // and writers of a few of them get different plans from a planner left to itself (a hash join
    // visits the table in its own order, a nested loop the ids in theirs): without the ordered
    // joins they deadlock.
    const ids = await users(3_000);
    await t.dataSource.query('ANALYZE users');
    const few = ids.filter((_, i) => i % 50 === 0);
    const txHost = t.app.get<TransactionHost<TransactionalAdapterTypeOrm>>(TransactionHost);
    const counters = t.app.get(UserTrafficRepository);
    const writers = 12;
    const chosen = (n: number) => (n % 2 === 0 ? ids : few);
    const added = await Promise.all(
      Array.from({ length: writers }, (_, n) =>
        txHost.withTransaction(async () => {
          const result = await counters.addTraffic(
            {
              ids: chosen(n).map((id) => canonicalUuid(id)!),
              bytes: chosen(n).map(() => BigInt(n + 1)),
            },
            10n ** 15n,
          );
          return result;
        }),
      ),
    );
    expect(added).toEqual(
      Array(writers).fill({ overLimit: [], crossed: [], missing: [], firstUse: [] }),
    );
    const totals = await used(ids);
    const fewSet = new Set(few);
    for (const id of ids) {
      const expected = Array.from({ length: writers }, (_, n) => n)
        .filter((n) => n % 2 === 0 || fewSet.has(id))
        .reduce((sum, n) => sum + n + 1, 0);
      expect(totals.get(id)).toBe(expected);
    }
  }, 120_000);

  it("a batch's first statement, its reports' record, orders the joins for the counters after it", async () => {
    const node = await newNode();
    const txHost = t.app.get<TransactionHost<TransactionalAdapterTypeOrm>>(TransactionHost);
    const planner = async () =>
      (
        (await txHost.tx.query(
          `SELECT current_setting('enable_hashjoin') AS hash, current_setting('enable_seqscan') AS seq,
                  current_setting('enable_bitmapscan') AS bitmap`,
        )) as Record<string, string>[]
      )[0];
    const seen = await txHost.withTransaction(async () => {
      const before = await planner();
      await t.app
        .get(InternalRepository)
        .recordReports([{ nodeId: node, reportId: randomUUID(), entries: 1 }]);
      return { before, after: await planner() };
    });
    expect(seen).toEqual({
      before: { hash: 'on', seq: 'on', bitmap: 'on' },
      after: { hash: 'off', seq: 'off', bitmap: 'off' },
    });
  });

  it("the counters' ordered joins last until the transaction ends, not on the pooled connection", async () => {
    const [id] = await users(1);
    const txHost = t.app.get<TransactionHost<TransactionalAdapterTypeOrm>>(TransactionHost);
    const counters = t.app.get(UserTrafficRepository);
    const settings = async (): Promise<{ hash: string; seq: string; bitmap: string }> => {
      const [row] = (await txHost.tx.query(
        `SELECT current_setting('enable_hashjoin') AS hash, current_setting('enable_seqscan') AS seq,
                current_setting('enable_bitmapscan') AS bitmap, pg_backend_pid() AS pid`,
      )) as { hash: string; seq: string; bitmap: string; pid: number }[];
      connections.add(row.pid);
      return { hash: row.hash, seq: row.seq, bitmap: row.bitmap };
    };
    const connections = new Set<number>();
    for (const outcome of ['committed', 'rolled back'] as const) {
      await txHost
        .withTransaction(async () => {
          await counters.addTraffic({ ids: [canonicalUuid(id)!], bytes: [1] }, 10n ** 15n);
          expect(await settings()).toEqual({ hash: 'off', seq: 'off', bitmap: 'off' });
          if (outcome === 'rolled back') throw new Error(outcome);
        })
        .catch((error: Error) => expect(error.message).toBe('rolled back'));
      // The pool's connections, each asked after the transaction: the settings went with it.
      const pids = new Set<number>();
      await Promise.all(
        Array.from({ length: 10 }, () =>
          t.dataSource
            .query(
              `SELECT current_setting('enable_hashjoin') AS hash, current_setting('enable_seqscan') AS seq,
                      current_setting('enable_bitmapscan') AS bitmap, pg_backend_pid() AS pid`,
            )
            .then(([row]: { hash: string; seq: string; bitmap: string; pid: number }[]) => {
              pids.add(row.pid);
              expect({ hash: row.hash, seq: row.seq, bitmap: row.bitmap }).toEqual({
                hash: 'on',
                seq: 'on',
                bitmap: 'on',
              });
            }),
        ),
      );
      expect([...connections].some((pid) => pids.has(pid))).toBe(true);
    }
  });

  it("the counters' UPDATE joins in id order, so it locks rows in id order, for small reports and large", async () => {
    // Without it the planner may hash the ids (or spill a hash join to batches) and visit the users
    // in the table's order, or in none that two writers share.
    const ids = (await users(5_000)).sort();
    await t.dataSource.query('ANALYZE users');
    const planOf = (some: string[]): Promise<string> =>
      t.dataSource.transaction(async (tx) => {
        await tx.query(ORDERED_JOINS);
        const rows = (await tx.query(`EXPLAIN ${ADD_TRAFFIC_SQL}`, [
          some,
          some.map(() => '1'),
          '1000',
        ])) as { 'QUERY PLAN': string }[];
        return rows.map((row) => row['QUERY PLAN']).join('\n');
      });
    // A few users of many: the nested loop.
    const few = await planOf(ids.slice(0, 5));
    expect(few).not.toMatch(/Hash|Seq Scan|Bitmap/);
    expect(few).toMatch(nestedLoop);
    // Most of them: whichever the planner finds cheaper (PostgreSQL 18 picks the merge join here,
    // 15 either, with the statistics of the moment), never a hash or the table's own order.
    const most = await planOf(ids);
    expect(most).not.toMatch(/Hash|Seq Scan|Bitmap/);
    expect(most).toMatch(eitherJoin);
  });

  it("the batch's counting statement, prepared for a few users, keeps a plan that joins them in id order", async () => {
    // A batch of up to PREPARED_USERS_AT_MOST users runs it prepared: after five calls PostgreSQL
    // may keep one generic plan, made without the arrays' sizes. It must lock in id order too.
    const ids = (await users(2_000)).sort();
    await t.dataSource.query('ANALYZE users');
    const uuids = (some: string[]): string => `'{${some.join(',')}}'`;
    const plan = await t.dataSource.transaction(async (tx) => {
      await tx.query(ORDERED_JOINS);
      await tx.query(`SET LOCAL plan_cache_mode = force_generic_plan`);
      await tx.query(`PREPARE count_traffic_generic AS ${COUNT_TRAFFIC_SQL}`);
      const few = ids.slice(0, 5);
      const rows = (await tx.query(
        `EXPLAIN EXECUTE count_traffic_generic(${uuids(few)}, '{1,1,1,1,1}', '1000', '{}', '{}',
           '{}', '{}', '{}', '{}', '{}', '{}', '{}', '{}')`,
      )) as { 'QUERY PLAN': string }[];
      await tx.query('DEALLOCATE count_traffic_generic');
      return rows.map((row) => row['QUERY PLAN']).join('\n');
    });
    expect(plan).not.toMatch(/Hash Join|Seq Scan|Bitmap/);
    expect(plan).toMatch(nestedLoop);
    // More users: planned for their number at each call, in id order too.
    const most = await t.dataSource.transaction(async (tx) => {
      await tx.query(ORDERED_JOINS);
      const none: string[] = [];
      const rows = (await tx.query(`EXPLAIN ${COUNT_TRAFFIC_SQL}`, [
        ids,
        ids.map(() => '1'),
        '1000',
        ...Array.from({ length: 10 }, () => none),
      ])) as { 'QUERY PLAN': string }[];
      return rows.map((row) => row['QUERY PLAN']).join('\n');
    });
    expect(most).not.toMatch(/Hash Join|Seq Scan|Bitmap/);
    expect(most).toMatch(eitherJoin);
  });

  it('reports sent at once are answered each on its own: applied, repeated, unknown node', async () => {
    const [a, b, capped] = await users(3);
    await t.dataSource.query(`UPDATE users SET traffic_limit_bytes = 10 WHERE id = $1`, [capped]);
    const [first, second] = [await newNode(), await newNode()];
    const repeated = { node_id: first, report_id: randomUUID(), entries: [entry(a, 1)] };
    await send(repeated).expect(200);
    const big = Array.from({ length: 10_000 }, () => entry(b, 1));
    const answers = await Promise.all([
      send({ node_id: first, report_id: randomUUID(), entries: big }),
      send(repeated),
      send({ node_id: randomUUID(), report_id: randomUUID(), entries: [entry(a, 1000)] }),
      send({ node_id: second, report_id: randomUUID(), entries: [entry(capped, 20)] }),
      send({ node_id: second, report_id: randomUUID(), entries: [entry(randomUUID(), 5)] }),
    ]);
    expect(answers.map((answer) => [answer.status, answer.body])).toEqual([
      [200, { applied: true, over_limit: [], unknown_users: 0, close: [] }],
      [200, { applied: false, over_limit: [], unknown_users: 0, close: [] }],
      [404, expect.objectContaining({ code: 'NOT_FOUND' })],
      [200, { applied: true, over_limit: [capped], unknown_users: 0, close: [] }],
      [200, { applied: true, over_limit: [], unknown_users: 1, close: [] }],
    ]);
    expect(Object.fromEntries(await used([a, b, capped]))).toEqual({
      [a]: 1,
      [b]: 10_000,
      [capped]: 20,
    });
  });

  it('reports queued behind another commit together; if that fails, each is applied alone', async () => {
    const { ids, reports } = await oneUserReports(4);
    const service = t.app.get(InternalService);
    // The second insert of daily figures is the first statement of the batch queued behind the
    // first report.
    await failNthDailyInsert('fault_second', 2);
    try {
      // Submitted in one tick: the first starts alone, the other three wait and go together.
      const outcomes = await Promise.all(reports.map((report) => service.report(report)));
      expect(outcomes.map((outcome) => outcome.applied)).toEqual([true, true, true, true]);
      expect([...(await used(ids)).values()].sort()).toEqual([1, 2, 3, 4]);
      // 1 (first, alone) + 1 (the batch of three, refused) + 3 (each of them alone).
      expect(await sequenceValue('fault_second')).toBe(5);
    } finally {
      await t.dataSource.query(`DROP TRIGGER fault_second ON node_traffic_days`);
    }
  });

  it('a batch is never applied inside another transaction, whose commit would keep a count its guess rolled back', async () => {
    const { ids, reports } = await oneUserReports(1);
    const service = t.app.get(InternalService);
    const txHost = t.app.get<TransactionHost<TransactionalAdapterTypeOrm>>(TransactionHost);
    await expect(txHost.withTransaction(() => service.report(reports[0]))).rejects.toThrow(
      'an existing transaction is already active',
    );
    expect((await used(ids)).get(ids[0])).toBe(0);
    // Outside one, the same report applies.
    await expect(service.report(reports[0])).resolves.toMatchObject({ applied: true });
    expect((await used(ids)).get(ids[0])).toBe(1);
  });

  it('a database going away fails the whole batch at once, each report answered to retry', async () => {
    const { ids, reports } = await oneUserReports(4);
    const service = t.app.get(InternalService);
    // 57P01 (admin_shutdown): what a server that is shutting down answers.
    await failNthDailyInsert('fault_shutdown', 2, '57P01');
    try {
      const settled = await Promise.allSettled(reports.map((report) => service.report(report)));
      expect(settled.map((result) => result.status)).toEqual([
        'fulfilled',
        'rejected',
        'rejected',
        'rejected',
      ]);
      for (const result of settled) {
        if (result.status === 'rejected') expect(isDatabaseUnavailable(result.reason)).toBe(true);
      }
      // Not retried one by one against a database that is away.
      expect(await sequenceValue('fault_shutdown')).toBe(2);
      expect([...(await used(ids)).values()].sort()).toEqual([0, 0, 0, 1]);
      // The proxy's retries apply them.
      await Promise.all(reports.slice(1).map((report) => service.report(report)));
      expect([...(await used(ids)).values()].sort()).toEqual([1, 2, 3, 4]);
    } finally {
      await t.dataSource.query(`DROP TRIGGER fault_shutdown ON node_traffic_days`);
    }
  });

  it.each([
    ['negative bytes', { bytes_up: -1 }],
    ['fractional bytes', { bytes_down: 1.5 }],
    ['string bytes', { bytes_up: '10' }],
    ['bytes past 2^53', { bytes_up: 2 ** 53 }],
    ['a non-UUID user id', { user_id: 'user-1' }],
    ['a missing field', { bytes_down: undefined }],
    ['an unknown field', { colour: 'red' }],
  ])('a report with %s is 400, applies nothing, and keeps its report_id', async (_what, bad) => {
    const ids = await users(2);
    const node = await newNode();
    const reportId = randomUUID();
    const good = ids.map((id) => ({ user_id: id, bytes_up: 5, bytes_down: 5 }));
    const response = await send({
      node_id: node,
      report_id: reportId,
      entries: [...good, { user_id: ids[0], bytes_up: 1, bytes_down: 1, ...bad }],
    });
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ code: 'VALIDATION_FAILED' });
    for (const value of (await used(ids)).values()) expect(value).toBe(0);
    // Refused reports do not use up their id.
    const retry = await send({ node_id: node, report_id: reportId, entries: good });
    expect(retry.body).toMatchObject({ applied: true });
  });

  it('malformed report shapes are 400', async () => {
    const node = await newNode();
    const [id] = await users(1);
    const entry = { user_id: id, bytes_up: 1, bytes_down: 1 };
    for (const body of [
      { node_id: node, report_id: randomUUID(), entries: Array(10_001).fill(entry) },
      { node_id: 'x', report_id: randomUUID(), entries: [entry] },
      { node_id: node, report_id: 'y', entries: [entry] },
      { node_id: node, report_id: randomUUID() },
      { node_id: node, report_id: randomUUID(), entries: {} },
      { node_id: node, report_id: randomUUID(), entries: [null] },
      { node_id: node, report_id: randomUUID(), entries: [entry], extra: 1 },
      [entry],
    ]) {
      const response = await send(body);
      expect(response.status).toBe(400);
    }
    expect((await used([id])).get(id)).toBe(0);
  });

  it('a report read from its bytes and one the reader leaves to JSON.parse count alike; refusals stay', async () => {
    const node = await newNode();
    const [plain, escaped, marked, typed] = await users(4);
    const text = (id: string) =>
      JSON.stringify({
        node_id: node,
        report_id: randomUUID(),
        entries: [{ user_id: id, bytes_up: 5, bytes_down: 6 }],
      });
    const post = (body: string, type = 'application/json') =>
      t.http().post('/api/v1/internal/traffic').set(secret).set('Content-Type', type).send(body);
    const readReports = async (): Promise<number> =>
      metricValue(
        parseMetrics(await t.app.get(Metrics).registry.metrics()),
        'vpn_traffic_reports_read_total',
      );
    const before = await readReports();
    // As nodes write it (read from its bytes); with an escaped character in the user's id, with a
    // byte order mark, or as another JSON type (each parsed the general way).
    const escape = `\\u00${escaped.charCodeAt(0).toString(16)}`;
    for (const answer of [
      await post(text(plain)),
      await post(text(escaped).replace(`"${escaped[0]}`, `"${escape}`)),
      await post(`\ufeff${text(marked)}`),
      await post(text(typed), 'application/vnd.report+json'),
    ]) {
      expect(answer.body).toEqual({ applied: true, over_limit: [], unknown_users: 0, close: [] });
    }
    // Only the first was read by the route's reader.
    expect((await readReports()) - before).toBe(1);
    // Read whole, then refused as the body parser refuses them: malformed, past the body's budget.
    const malformed = await post(text(plain).slice(0, -1));
    expect(malformed.status).toBe(400);
    expect(malformed.body).toMatchObject({ code: 'VALIDATION_FAILED' });
    const entry = `{"user_id":"${plain}","bytes_up":1,"bytes_down":1}`;
    const wide = `{"node_id":"${node}","report_id":"${randomUUID()}","entries":[${Array(25_001).fill(entry)}]}`;
    const refused = await post(wide);
    expect(refused.status).toBe(400);
    expect(refused.body.message).toBe('request body holds more than 100000 fields and elements');
    expect(Object.fromEntries(await used([plain, escaped, marked, typed]))).toEqual({
      [plain]: 11,
      [escaped]: 11,
      [marked]: 11,
      [typed]: 11,
    });
  });

  it('an unknown node is 404 and applies nothing; unknown users are skipped and counted', async () => {
    const [id] = await users(1);
    const stranger = randomUUID();
    const missing = await send({
      node_id: randomUUID(),
      report_id: randomUUID(),
      entries: [{ user_id: id, bytes_up: 9, bytes_down: 9 }],
    });
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ code: 'NOT_FOUND' });
    expect((await used([id])).get(id)).toBe(0);

    const response = await send({
      node_id: await newNode(),
      report_id: randomUUID(),
      entries: [
        { user_id: id, bytes_up: 9, bytes_down: 9 },
        { user_id: stranger, bytes_up: 1, bytes_down: 1 },
        { user_id: stranger, bytes_up: 1, bytes_down: 1 },
      ],
    });
    expect(response.body).toEqual({ applied: true, over_limit: [], unknown_users: 1, close: [] });
    expect((await used([id])).get(id)).toBe(18);
  });

  it('a deleted node is 404 and its report is not recorded; a repeat does not stamp the node', async () => {
    const [id] = await users(1);
    const reportsOf = async (node: string): Promise<number> =>
      (
        (await t.dataSource.query(
          `SELECT count(*)::int AS n FROM traffic_reports WHERE node_id = $1`,
          [node],
        )) as { n: number }[]
      )[0].n;
    const lastReportAt = async (node: string): Promise<Date | null> =>
      (
        (await t.dataSource.query(`SELECT last_report_at FROM nodes WHERE id = $1`, [node])) as {
          last_report_at: Date | null;
        }[]
      )[0].last_report_at;

    const deleted = await newNode();
    await t.dataSource.query(`UPDATE nodes SET deleted_at = now() WHERE id = $1`, [deleted]);
    const refused = await send({
      node_id: deleted,
      report_id: randomUUID(),
      entries: [{ user_id: id, bytes_up: 5, bytes_down: 5 }],
    });
    expect(refused.status).toBe(404);
    expect(await reportsOf(deleted)).toBe(0);
    expect(await lastReportAt(deleted)).toBeNull();
    expect((await used([id])).get(id)).toBe(0);

    const live = await newNode();
    const report = {
      node_id: live,
      report_id: randomUUID(),
      entries: [{ user_id: id, bytes_up: 5, bytes_down: 5 }],
    };
    await send(report).expect(200);
    expect(await lastReportAt(live)).not.toBeNull();
    await t.dataSource.query(`UPDATE nodes SET last_report_at = NULL WHERE id = $1`, [live]);
    const repeat = await send(report);
    expect(repeat.body).toEqual({ applied: false, over_limit: [], unknown_users: 0, close: [] });
    expect(await lastReportAt(live)).toBeNull();
    expect(await reportsOf(live)).toBe(1);
    expect((await used([id])).get(id)).toBe(10);
  });

  it('over_limit names the reported users now at or over their limit', async () => {
    const [under, at, over] = await users(3);
    await t.dataSource.query(
      `UPDATE users SET traffic_limit_bytes = 100 WHERE id = ANY($1::uuid[])`,
      [[under, at, over]],
    );
    const response = await send({
      node_id: await newNode(),
      report_id: randomUUID(),
      entries: [
        { user_id: under, bytes_up: 99, bytes_down: 0 },
        { user_id: at, bytes_up: 50, bytes_down: 50 },
        { user_id: over, bytes_up: 500, bytes_down: 0 },
      ],
    });
    expect((response.body as { over_limit: string[] }).over_limit.sort()).toEqual(
      [at, over].sort(),
    );
  });

  it('a fault between the report record and the counters leaves neither; the retry applies', async () => {
    const ids = await users(2);
    const node = await newNode();
    await failNthDailyInsert('fault_once', 1);
    try {
      const body = {
        node_id: node,
        report_id: randomUUID(),
        entries: ids.map((id) => ({ user_id: id, bytes_up: 40, bytes_down: 2 })),
      };
      const failed = await send(body);
      expect(failed.status).toBe(500);
      expect(JSON.stringify(failed.body)).not.toContain('injected');
      for (const value of (await used(ids)).values()) expect(value).toBe(0);
      const reports = (await t.dataSource.query(
        `SELECT count(*)::int AS n FROM traffic_reports WHERE report_id = $1`,
        [body.report_id],
      )) as { n: number }[];
      expect(reports[0].n).toBe(0);

      const retry = await send(body);
      expect(retry.body).toMatchObject({ applied: true });
      for (const value of (await used(ids)).values()) expect(value).toBe(42);
    } finally {
      await t.dataSource.query(`DROP TRIGGER fault_once ON node_traffic_days`);
    }
  });

  it('limits: the limit that applies now, use and active; changes apply at the next call', async () => {
    const [plain] = await users(1);
    const subscribed = await newUser(t, 'seed', {
      planName: 'big',
      subscriptionExpiresAt: new Date(Date.now() + 86_400_000),
    });
    await t.dataSource.query(
      `INSERT INTO plans (name, duration_days, traffic_limit_bytes) VALUES ('big', 30, 777)`,
    );
    const limits = async () =>
      (
        await t
          .http()
          .get(`/api/v1/internal/limits?user_ids=${plain},${subscribed.user.id},${randomUUID()}`)
          .set(secret)
          .expect(200)
      ).body as unknown[];
    expect(await limits()).toEqual([
      {
        user_id: plain,
        traffic_limit_bytes: Number(t.settings.trafficLimitDefaultBytes),
        traffic_used_bytes: 0,
        active: false,
      },
      {
        user_id: subscribed.user.id,
        traffic_limit_bytes: 777,
        traffic_used_bytes: 0,
        active: true,
      },
    ]);
    await t
      .http()
      .patch('/api/v1/admin/settings/traffic-limit')
      .set(owner.bearer)
      .send({ default_bytes: 12345 })
      .expect(200);
    await t
      .http()
      .patch(`/api/v1/admin/users/${subscribed.user.id}/traffic-limit`)
      .set(owner.bearer)
      .send({ traffic_limit_bytes: 999 })
      .expect(200);
    expect(await limits()).toEqual([
      { user_id: plain, traffic_limit_bytes: 12345, traffic_used_bytes: 0, active: false },
      {
        user_id: subscribed.user.id,
        traffic_limit_bytes: 999,
        traffic_used_bytes: 0,
        active: true,
      },
    ]);
  });

  it('limits: at most 1,000 ids, all UUIDs', async () => {
    const ids = Array.from({ length: 1001 }, () => randomUUID());
    const tooMany = await t
      .http()
      .get(`/api/v1/internal/limits?user_ids=${ids.join(',')}`)
      .set(secret);
    expect(tooMany.status).toBe(400);
    const thousand = await t
      .http()
      .get(`/api/v1/internal/limits?user_ids=${ids.slice(0, 1000).join(',')}`)
      .set(secret);
    expect(thousand.status).toBe(200);
    for (const query of ['user_ids=nope', '', 'user_ids=']) {
      const response = await t.http().get(`/api/v1/internal/limits?${query}`).set(secret);
      expect(response.status).toBe(400);
    }
  });

  it('the clean-up forgets report ids after 30 days, and a newer one is still refused', async () => {
    const [id] = await users(1);
    const node = await newNode();
    const report = () => ({
      node_id: node,
      report_id: randomUUID(),
      entries: [{ user_id: id, bytes_up: 1, bytes_down: 1 }],
    });
    const [old, recent] = [report(), report()];
    for (const body of [old, recent])
      expect((await send(body)).body).toMatchObject({ applied: true });
    await t.dataSource.query(
      `UPDATE traffic_reports SET received_at = now() - interval '31 days' WHERE report_id = $1`,
      [old.report_id],
    );
    await t.app.get(InternalCleanupJob).run();
    const kept = (await t.dataSource.query(
      `SELECT report_id FROM traffic_reports WHERE node_id = $1`,
      [node],
    )) as { report_id: string }[];
    expect(kept.map((row) => row.report_id)).toEqual([recent.report_id]);
    expect((await send(recent)).body).toMatchObject({ applied: false });
    expect((await used([id])).get(id)).toBe(4);
  });
});
