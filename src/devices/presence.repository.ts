import { Injectable } from '@nestjs/common';
import { TransactionHost } from '@nestjs-cls/transactional';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import type { Uuid } from '../common/uuid';
import { sqlRows, timestamptzArray, uuidArray, writtenAhead } from '../database/sql';

/** Where a device connected last: the newest address wins. */
export interface PresenceRecord {
  deviceId: string;
  nodeId: string;
  address: string;
  since: Date;
  seenAt: Date;
}

/**
 * The owner of `device_presence`: each device's newest connection across nodes, kept minutes (the
 * clean-up deletes rows not seen for longer), never in the audit log.
 */
@Injectable()
export class PresenceRepository {
  constructor(private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>) {}

  /**
   * Records each device's newest connection (devices that no longer exist are skipped), in the
   * caller's transaction, answered with its next query (`writtenAhead`): its COMMIT, for the
   * traffic batch whose last write this is.
   */
  async save(
    rows: { deviceId: Uuid; nodeId: Uuid; address: string; since: Date }[],
  ): Promise<void> {
    if (rows.length === 0) return;
    await writtenAhead(this.txHost.tx, [
      {
        sql: `INSERT INTO device_presence (device_id, node_id, address, since, seen_at)
       SELECT v.id, v.node_id, v.address, v.since, now()
         FROM unnest($1::uuid[], $2::uuid[], $3::inet[], $4::timestamptz[]) AS v(id, node_id, address, since)
         JOIN devices d ON d.id = v.id
       ON CONFLICT (device_id) DO UPDATE SET node_id = EXCLUDED.node_id, address = EXCLUDED.address,
         since = EXCLUDED.since, seen_at = now()`,
        params: [
          uuidArray(rows.map((r) => r.deviceId)),
          uuidArray(rows.map((r) => r.nodeId)),
          rows.map((r) => r.address),
          timestamptzArray(rows.map((r) => r.since)),
        ],
        prepared: true,
      },
    ]);
  }

  /**
   * Forgets up to `batch` connections not seen for `minutes`; how many. A row a report batch holds
   * is left for the next run (the batch is refreshing it): the job never waits for a batch, so the
   * two cannot deadlock, whatever order each takes its rows in.
   */
  async forgetOlderThan(minutes: number, batch: number): Promise<number> {
    const rows = await sqlRows(
      this.txHost.tx,
      `DELETE FROM device_presence
        WHERE device_id IN (SELECT device_id FROM device_presence
                             WHERE seen_at < now() - make_interval(mins => $1)
                             LIMIT $2 FOR UPDATE SKIP LOCKED)
       RETURNING 1`,
      [minutes, batch],
    );
    return rows.length;
  }
}
