/**
 * One network address per device across nodes, as the service keeps it from the nodes' traffic
 * reports (`online`): the newest connection wins and the node holding an older one is told to
 * close it; moves between nodes or networks are counted towards `shared_suspected`; the device
 * list shows the address with its last part hidden. (The same on real tunnel cores is in
 * agent/test/link-tunnel.e2e-spec.ts.)
 */
import { BIGINT_MAX } from '../src/common/byte-count';
import { randomUUID } from 'node:crypto';
import { canonicalUuid } from '../src/common/uuid';
import { DevicesCleanupJob } from '../src/devices/devices.jobs';
import { PresenceRepository } from '../src/devices/presence.repository';
import { InternalService } from '../src/internal/internal.service';
import type { TrafficReport } from '../src/internal/traffic-report.pipe';
import { startTestApp, type TestApp } from './harness/app';
import { newUser, type TestUser } from './harness/factories';
import { createNode, subscribedUser } from './harness/nodes';

interface DeviceView {
  id: string;
  address_hint: string | null;
  shared_suspected: boolean;
}

describe('device presence: one address per device across nodes', () => {
  let t: TestApp;
  let owner: TestUser;
  let nodeA: string;
  let nodeB: string;

  beforeAll(async () => {
    t = await startTestApp({ DEVICE_SWITCHES_SUSPECT: '2' });
    owner = await newUser(t, 'owner');
    nodeA = (await createNode(t, owner, { name: 'Node A', host: '10.0.0.1' })).id;
    nodeB = (await createNode(t, owner, { name: 'Node B', host: '10.0.0.2' })).id;
  });
  afterAll(() => t.close());

  /** A subscribed user with one device made by a fetch of the link. */
  async function userWithDevice(): Promise<{ user: TestUser; deviceId: string }> {
    const user = await subscribedUser(t);
    const link = await t.http().get('/api/v1/users/me/devices').set(user.bearer).expect(200);
    await t
      .http()
      .get(new URL(link.body.subscription_url as string).pathname)
      .set('User-Agent', 'Happ/2.3.1')
      .set('x-hwid', `phone-${randomUUID()}`)
      .expect(200);
    const [device] = await devicesOf(user);
    return { user, deviceId: device.id };
  }

  async function devicesOf(user: TestUser): Promise<DeviceView[]> {
    const response = await t.http().get('/api/v1/users/me/devices').set(user.bearer).expect(200);
    return response.body.devices as DeviceView[];
  }

  /** Node `node` reports these connections and entries (to instance `to`). */
  function send(
    node: string,
    online: { device_id: string; address: string; since: Date }[],
    to: TestApp = t,
    entries: object[] = [],
  ) {
    return to
      .http()
      .post('/api/v1/internal/traffic')
      .set({ 'X-Internal-Secret': t.settings.internalSecret })
      .send({
        node_id: node,
        report_id: randomUUID(),
        entries,
        online: online.map((c) => ({ ...c, since: c.since.toISOString() })),
      });
  }

  /** Node `node` reports these connections (to instance `to`); the devices it is told to close. */
  async function report(
    node: string,
    online: { device_id: string; address: string; since: Date }[],
    to: TestApp = t,
  ): Promise<string[]> {
    const response = await send(node, online, to).expect(200);
    return response.body.close as string[];
  }

  const at = (minutesAgo: number): Date => new Date(Date.now() - minutesAgo * 60_000);

  it('the newest connection wins: the node holding the older one is told to close it', async () => {
    const { user, deviceId } = await userWithDevice();
    expect(
      await report(nodeA, [{ device_id: deviceId, address: '198.51.100.7', since: at(3) }]),
    ).toEqual([]);
    expect(
      await report(nodeB, [{ device_id: deviceId, address: '203.0.113.9', since: at(1) }]),
    ).toEqual([]);
    // Node A still holds the older connection: it is told to close it, and it does not win back.
    expect(
      await report(nodeA, [{ device_id: deviceId, address: '198.51.100.7', since: at(3) }]),
    ).toEqual([deviceId]);
    expect(
      await report(nodeB, [{ device_id: deviceId, address: '203.0.113.9', since: at(1) }]),
    ).toEqual([]);
    const [device] = await devicesOf(user);
    expect(device.address_hint).toBe('203.0.113.x');
    expect(device.shared_suspected).toBe(false);
  });

  it('moves between nodes or networks are counted; within a /24 on one node they are not', async () => {
    const { user, deviceId } = await userWithDevice();
    const seen = (node: string, address: string, minutesAgo: number) =>
      report(node, [{ device_id: deviceId, address, since: at(minutesAgo) }]);
    await seen(nodeA, '198.51.100.7', 9);
    await seen(nodeA, '198.51.100.8', 8); // the same /24: not a switch
    await seen(nodeA, '::ffff:198.51.100.9', 7); // the same client through a dual-stack socket
    expect((await devicesOf(user))[0]).toMatchObject({
      address_hint: '198.51.100.x',
      shared_suspected: false,
    });
    await seen(nodeB, '198.51.100.9', 6); // another node: 1
    await seen(nodeB, '2001:db8:1:2::5', 5); // another network: 2
    expect((await devicesOf(user))[0]).toMatchObject({
      address_hint: '2001:db8:1:2::x',
      shared_suspected: false,
    });
    await seen(nodeA, '2001:db8:1:2::6', 4); // 3, over DEVICE_SWITCHES_SUSPECT = 2
    expect((await devicesOf(user))[0].shared_suspected).toBe(true);
  });

  it('a device that does not exist is left out, and the others of the report are kept', async () => {
    const { user, deviceId } = await userWithDevice();
    const ghost = randomUUID();
    expect(
      await report(nodeA, [
        { device_id: ghost, address: '198.51.100.20', since: at(2) },
        { device_id: deviceId, address: '192.0.2.44', since: at(2) },
      ]),
    ).toEqual([]);
    expect((await devicesOf(user))[0].address_hint).toBe('192.0.2.x');
    const rows = (await t.dataSource.query(
      `SELECT device_id FROM device_presence WHERE device_id = ANY($1::uuid[])`,
      [[ghost, deviceId]],
    )) as { device_id: string }[];
    expect(rows.map((row) => row.device_id)).toEqual([deviceId]);
  });

  it('the clean-up forgets connections not seen for 5 minutes, a batch at a time, and skips one a report batch holds', async () => {
    const devices = await Promise.all(Array.from({ length: 5 }, () => userWithDevice()));
    const ids = devices.map((d) => d.deviceId);
    await report(
      nodeA,
      ids.map((id, i) => ({ device_id: id, address: `198.51.100.${60 + i}`, since: at(1) })),
    );
    // Four of them last seen 6 minutes ago; the fifth just now.
    await t.dataSource.query(
      `UPDATE device_presence SET seen_at = now() - interval '6 minutes' WHERE device_id = ANY($1)`,
      [ids.slice(0, 4)],
    );
    const kept = async (): Promise<string[]> =>
      (
        (await t.dataSource.query(
          `SELECT device_id FROM device_presence WHERE device_id = ANY($1) ORDER BY device_id`,
          [ids],
        )) as { device_id: string }[]
      ).map((row) => row.device_id);
    const presence = t.app.get(PresenceRepository);

    // One stale row held by a transaction, as a report batch holds the rows it refreshes.
    const holder = t.dataSource.createQueryRunner();
    await holder.connect();
    await holder.startTransaction();
    try {
      await holder.query(`SELECT 1 FROM device_presence WHERE device_id = $1 FOR UPDATE`, [ids[0]]);
      expect(await presence.forgetOlderThan(5, 2)).toBe(2);
      expect(await presence.forgetOlderThan(5, 2)).toBe(1);
      expect(await presence.forgetOlderThan(5, 2)).toBe(0);
      expect(await kept()).toEqual([ids[0], ids[4]].sort());
    } finally {
      await holder.rollbackTransaction();
      await holder.release();
    }
    // Once free, the job's next run forgets it.
    await t.app.get(DevicesCleanupJob).run();
    expect(await kept()).toEqual([ids[4]]);
  });

  it('a connection reported again unchanged is written again only once its record is 2 minutes old', async () => {
    const { deviceId } = await userWithDevice();
    const seenAt = async (): Promise<number> => {
      const [row] = (await t.dataSource.query(
        `SELECT seen_at FROM device_presence WHERE device_id = $1`,
        [deviceId],
      )) as { seen_at: Date }[];
      return row.seen_at.getTime();
    };
    const connection = { device_id: deviceId, address: '198.51.100.30', since: at(1) };
    await report(nodeA, [connection]);
    const first = await seenAt();
    await report(nodeA, [connection]);
    expect(await seenAt()).toBe(first);
    // As if the last write were 3 minutes ago: the next report writes it again.
    await t.dataSource.query(
      `UPDATE device_presence SET seen_at = seen_at - interval '3 minutes' WHERE device_id = $1`,
      [deviceId],
    );
    await report(nodeA, [connection]);
    expect(await seenAt()).toBeGreaterThanOrEqual(first);
    // And a change is written at once.
    await report(nodeA, [{ ...connection, address: '198.51.100.31' }]);
    const [row] = (await t.dataSource.query(
      `SELECT host(address) AS address FROM device_presence WHERE device_id = $1`,
      [deviceId],
    )) as { address: string }[];
    expect(row.address).toBe('198.51.100.31');
  });

  it('two reports of one batch naming one device: the newest connection is kept, the move counted once', async () => {
    const { user, deviceId } = await userWithDevice();
    const service = t.app.get(InternalService);
    const sighting = (node: string, address: string, since: Date): TrafficReport => ({
      nodeId: canonicalUuid(node)!,
      reportId: canonicalUuid(randomUUID())!,
      userIds: [],
      bytesUp: [],
      bytesDown: [],
      devices: { deviceIds: [], userIds: [], bytesUp: [], bytesDown: [] },
      online: [{ deviceId: canonicalUuid(deviceId)!, address, since }],
    });
    // Submitted in one tick: the first goes alone, the other two wait and go together.
    const [, older, newer] = await Promise.all([
      service.report(sighting(nodeA, '192.0.2.1', at(9))),
      service.report(sighting(nodeA, '192.0.2.2', at(3))),
      service.report(sighting(nodeB, '203.0.113.5', at(2))),
    ]);
    expect(newer.close).toEqual([]);
    expect([[], [deviceId]]).toContainEqual(older.close);
    const [kept] = (await t.dataSource.query(
      `SELECT node_id, host(address) AS address FROM device_presence WHERE device_id = $1`,
      [deviceId],
    )) as { node_id: string; address: string }[];
    expect(kept).toEqual({ node_id: nodeB, address: '203.0.113.5' });
    const [device] = await devicesOf(user);
    expect(device.address_hint).toBe('203.0.113.x');
    const [{ switches }] = (await t.dataSource.query(`SELECT switches FROM devices WHERE id = $1`, [
      deviceId,
    ])) as { switches: number }[];
    // Node A's second report, when taken first, is no move; node B's is one.
    expect(switches).toBe(1);
  });

  it('a report naming several devices answers every user it took over the limit, whichever device comes first', async () => {
    // The counting statement answers a row per device; the users' summary travels on one of them.
    const users = await Promise.all([userWithDevice(), userWithDevice(), userWithDevice()]);
    const [over, , alsoOver] = users;
    for (const { user } of [over, alsoOver]) {
      await t.dataSource.query(`UPDATE users SET traffic_limit_bytes = 40 WHERE id = $1`, [
        user.user.id,
      ]);
    }
    const entries = users.map(({ user, deviceId }) => ({
      user_id: user.user.id,
      bytes_up: 30,
      bytes_down: 12,
      devices: [{ device_id: deviceId, bytes_up: 30, bytes_down: 12 }],
    }));
    const online = users.map(({ deviceId }, i) => ({
      device_id: deviceId,
      address: `198.51.100.${120 + i}`,
      since: at(1),
    }));
    const answer = await send(nodeA, online, t, entries).expect(200);
    expect([...(answer.body.over_limit as string[])].sort()).toEqual(
      [over.user.user.id, alsoOver.user.user.id].sort(),
    );
    expect(answer.body).toMatchObject({ applied: true, unknown_users: 0, close: [] });
    // And a batch without users: a sighting alone still answers.
    await send(nodeB, [{ ...online[1], since: at(0.5) }]).expect(200, {
      applied: true,
      over_limit: [],
      unknown_users: 0,
      close: [],
    });
    // That was a move to another node: its window starts now.
    const [moved] = (await t.dataSource.query(
      `SELECT switches, switches_since FROM devices WHERE id = $1`,
      [online[1].device_id],
    )) as { switches: number; switches_since: Date }[];
    expect(moved.switches).toBe(1);
    expect(Math.abs(moved.switches_since.getTime() - Date.now())).toBeLessThan(60_000);
  });

  it("a device's byte counters stop at the bigint maximum instead of failing the report", async () => {
    const { user, deviceId } = await userWithDevice();
    await t.dataSource.query(`UPDATE devices SET bytes_up = $2, bytes_down = 5 WHERE id = $1`, [
      deviceId,
      (BIGINT_MAX - 10n).toString(),
    ]);
    const entry = {
      user_id: user.user.id,
      bytes_up: 30,
      bytes_down: 12,
      devices: [{ device_id: deviceId, bytes_up: 30, bytes_down: 12 }],
    };
    await send(nodeA, [], t, [entry]).expect(200);
    const [row] = (await t.dataSource.query(
      `SELECT d.bytes_up::text AS up, d.bytes_down::text AS down, u.traffic_used_bytes::int AS used
         FROM devices d JOIN users u ON u.id = d.user_id WHERE d.id = $1`,
      [deviceId],
    )) as { up: string; down: string; used: number }[];
    expect(row).toEqual({ up: BIGINT_MAX.toString(), down: '17', used: 42 });
  });

  it("a connection's write that fails fails the batch: nothing of the report is kept, and sent again it is counted once", async () => {
    // The connections are the batch's last writes, answered with its COMMIT: PostgreSQL answers
    // the COMMIT of a failed transaction with a rollback, which must not pass for a commit.
    const { user, deviceId } = await userWithDevice();
    const reportId = randomUUID();
    const body = {
      node_id: nodeA,
      report_id: reportId,
      entries: [
        {
          user_id: user.user.id,
          bytes_up: 30,
          bytes_down: 12,
          devices: [{ device_id: deviceId, bytes_up: 30, bytes_down: 12 }],
        },
      ],
      online: [{ device_id: deviceId, address: '192.0.2.250', since: at(1).toISOString() }],
    };
    const post = () =>
      t
        .http()
        .post('/api/v1/internal/traffic')
        .set({ 'X-Internal-Secret': t.settings.internalSecret })
        .send(body);
    const kept = async () => {
      const [row] = (await t.dataSource.query(
        `SELECT u.traffic_used_bytes::int AS used, d.bytes_up::int AS up,
                (SELECT count(*)::int FROM traffic_reports WHERE report_id = $2) AS recorded,
                (SELECT host(address) FROM device_presence WHERE device_id = d.id) AS address
           FROM devices d JOIN users u ON u.id = d.user_id WHERE d.id = $1`,
        [deviceId, reportId],
      )) as { used: number; up: number; recorded: number; address: string | null }[];
      return row;
    };
    await t.dataSource.query(
      `CREATE FUNCTION refuse_test_address() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN
         IF NEW.address = '192.0.2.250'::inet THEN RAISE EXCEPTION 'refused by the test'; END IF;
         RETURN NEW;
       END $$;
       CREATE TRIGGER refuse_test_address BEFORE INSERT OR UPDATE ON device_presence
         FOR EACH ROW EXECUTE FUNCTION refuse_test_address();`,
    );
    try {
      const refused = await post();
      expect(refused.status).toBeGreaterThanOrEqual(500);
      expect(await kept()).toEqual({ used: 0, up: 0, recorded: 0, address: null });
    } finally {
      await t.dataSource.query(
        `DROP TRIGGER refuse_test_address ON device_presence; DROP FUNCTION refuse_test_address();`,
      );
    }
    const applied = await post().expect(200);
    expect(applied.body).toMatchObject({ applied: true, close: [] });
    await post().expect(200, { applied: false, over_limit: [], unknown_users: 0, close: [] });
    expect(await kept()).toEqual({ used: 42, up: 30, recorded: 1, address: '192.0.2.250' });
  });

  it('a batch locks its users, then its devices, then its nodes: each part of the counting statement waits for the one before', async () => {
    const { user, deviceId } = await userWithDevice();
    const userId = user.user.id;
    const node = (await createNode(t, owner, { name: 'Node L', host: '10.0.0.9' })).id;
    const holder = t.dataSource.createQueryRunner();
    const probe = t.dataSource.createQueryRunner();
    /** Whether another transaction may take this row's lock now (false: the batch holds it). */
    const free = async (table: 'users' | 'nodes', id: string): Promise<boolean> => {
      await probe.startTransaction();
      try {
        await probe.query(`SELECT 1 FROM ${table} WHERE id = $1 FOR NO KEY UPDATE NOWAIT`, [id]);
        return true;
      } catch (error) {
        if ((error as { code?: string }).code === '55P03') return false;
        throw error;
      } finally {
        await probe.rollbackTransaction();
      }
    };
    try {
      await holder.startTransaction();
      await holder.query(`SELECT 1 FROM devices WHERE id = $1 FOR UPDATE`, [deviceId]);
      const sent = send(
        node,
        [{ device_id: deviceId, address: '198.51.100.77', since: at(1) }],
        t,
        [
          {
            user_id: userId,
            bytes_up: 30,
            bytes_down: 12,
            devices: [{ device_id: deviceId, bytes_up: 30, bytes_down: 12 }],
          },
        ],
      ).then((response) => response);
      // The batch now waits for the device's row.
      for (let waited = 0; ; waited += 20) {
        const [{ n }] = (await t.dataSource.query(
          `SELECT count(*)::int AS n FROM pg_stat_activity
            WHERE wait_event_type = 'Lock' AND query LIKE 'WITH added AS (%'`,
        )) as { n: number }[];
        if (n > 0) break;
        if (waited > 10_000) throw new Error('the batch never waited for the device');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(await free('users', userId)).toBe(false);
      expect(await free('nodes', node)).toBe(true);
      await holder.rollbackTransaction();
      const response = await sent;
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ applied: true, close: [] });
      const [row] = (await t.dataSource.query(
        `SELECT d.bytes_up::int AS up, u.traffic_used_bytes::int AS used, n.last_report_at IS NOT NULL AS stamped
           FROM devices d JOIN users u ON u.id = d.user_id, nodes n WHERE d.id = $1 AND n.id = $2`,
        [deviceId, node],
      )) as { up: number; used: number; stamped: boolean }[];
      expect(row).toEqual({ up: 30, used: 42, stamped: true });
    } finally {
      if (holder.isTransactionActive) await holder.rollbackTransaction();
      await holder.release();
      await probe.release();
    }
  });

  it('two nodes reporting one device at once to two instances, 20 rounds: the newest connection is the one kept, and its node is never told to close it', async () => {
    // Each instance applies one report batch at a time: only two instances race on the database.
    const other = await startTestApp({ DEVICE_SWITCHES_SUSPECT: '2' }, { database: t.database });
    try {
      const { deviceId } = await userWithDevice();
      const base = Date.now() - 60_000;
      for (let round = 0; round < 20; round++) {
        // Each round the newer connection is on the other node, reported to the other instance.
        const [newer, older] = round % 2 === 0 ? [nodeA, nodeB] : [nodeB, nodeA];
        const since = (node: string) => new Date(base + round * 1_000 + (node === newer ? 500 : 0));
        const [newerClose, olderClose] = await Promise.all(
          [newer, older].map((node) =>
            report(
              node,
              [
                {
                  device_id: deviceId,
                  address: `198.51.${round}.${node === newer ? 1 : 2}`,
                  since: since(node),
                },
              ],
              node === nodeA ? t : other,
            ),
          ),
        );
        expect(newerClose).toEqual([]);
        const [kept] = (await t.dataSource.query(
          `SELECT node_id, host(address) AS address, since FROM device_presence WHERE device_id = $1`,
          [deviceId],
        )) as { node_id: string; address: string; since: Date }[];
        expect(kept).toMatchObject({ node_id: newer, address: `198.51.${round}.1` });
        expect(kept.since.getTime()).toBe(since(newer).getTime());
        // The older node is told to close it unless its report was taken before the newer one's.
        expect([[], [deviceId]]).toContainEqual(olderClose);
      }
    } finally {
      await other.close();
    }
  });
});
