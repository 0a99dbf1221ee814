/**
 * What PostgreSQL and the machine were doing, sampled five times a second into a file of
 * tab-separated lines, to read beside a run's worst seconds (`bench:fleet` with
 * BENCH_FLEET_SAMPLES=<file>). Each line starts with the clock's time (UTC, to the millisecond) and
 * a kind:
 *
 * - `backend`: a backend of the service's database that is not idle, or autovacuum, or the
 *   checkpointer when it is not sleeping: its type, state, wait, how long its transaction has run
 *   (s) and the start of its statement;
 * - `cpu`: the machine's CPU since the last sample by kind, in clock ticks of all cores
 *   (`/proc/stat`: user, system, idle, iowait, steal), and the service's own in ms, all of it and
 *   its event loop's;
 * - `wal`, once a second: the WAL's records, full-page images and bytes so far (`pg_stat_wal`),
 *   and the checkpoints so far, timed and requested.
 *
 * It reads, never writes, over one connection of its own; its CPU counts as the harness's.
 */
import { createWriteStream, readFileSync } from 'node:fs';
import { Client } from 'pg';
import { eventLoopCpuUs, processCpuUs } from './processes';

const PERIOD_MS = 200;

const BACKENDS_SQL = `
  SELECT backend_type, state, wait_event_type, wait_event,
         extract(epoch FROM now() - xact_start)::float8 AS xact_s,
         left(regexp_replace(query, '\\s+', ' ', 'g'), 60) AS query
    FROM pg_stat_activity
   WHERE pid <> pg_backend_pid()
     AND ((datname = current_database() AND state <> 'idle')
       OR backend_type = 'autovacuum worker'
       OR (backend_type = 'checkpointer' AND wait_event IS DISTINCT FROM 'CheckpointerMain'))`;

/** pg_stat_checkpointer from PostgreSQL 17 on; pg_stat_bgwriter before. */
const CHECKPOINTS_SQL = {
  new: 'SELECT num_timed AS timed, num_requested AS requested FROM pg_stat_checkpointer',
  old: 'SELECT checkpoints_timed AS timed, checkpoints_req AS requested FROM pg_stat_bgwriter',
};

export interface ActivitySampler {
  stop(): Promise<void>;
}

export async function sampleActivity(
  databaseUrl: string,
  servicePid: number,
  file: string,
): Promise<ActivitySampler> {
  const client = new Client({ connectionString: databaseUrl });
  client.on('error', () => undefined);
  await client.connect();
  const [{ modern }] = (
    await client.query<{ modern: boolean }>(
      `SELECT to_regclass('pg_catalog.pg_stat_checkpointer') IS NOT NULL AS modern`,
    )
  ).rows;
  const out = createWriteStream(file);
  const line = (kind: string, ...fields: unknown[]): boolean =>
    out.write(`${new Date().toISOString().slice(11, 23)}\t${kind}\t${fields.join('\t')}\n`);
  let machineBefore = machineTicks();
  let serviceBefore = serviceCpuUs(servicePid);
  let samples = 0;
  let stopped = false;

  const sample = async (): Promise<void> => {
    const { rows } = await client.query<Record<string, unknown>>(BACKENDS_SQL);
    for (const row of rows) {
      const xact = row.xact_s === null ? '' : Math.max(0, Number(row.xact_s)).toFixed(3);
      line(
        'backend',
        row.backend_type,
        row.state,
        row.wait_event_type ?? '-',
        row.wait_event ?? '-',
        xact,
        row.query ?? '',
      );
    }
    const machine = machineTicks();
    const service = serviceCpuUs(servicePid);
    const [user, system, idle, iowait, steal] = machine.map((ticks, i) => ticks - machineBefore[i]);
    const [all, eventLoop] = service.map((us, i) => ((us - serviceBefore[i]) / 1000).toFixed(0));
    line(
      'cpu',
      `user ${user}`,
      `system ${system}`,
      `idle ${idle}`,
      `iowait ${iowait}`,
      `steal ${steal}`,
      `service ${all} ms (event loop ${eventLoop})`,
    );
    machineBefore = machine;
    serviceBefore = service;
    if (samples++ % (1000 / PERIOD_MS) === 0) {
      const [wal] = (
        await client.query<Record<string, unknown>>(
          `SELECT wal_records, wal_fpi, wal_bytes, c.timed, c.requested
             FROM pg_stat_wal, (${modern ? CHECKPOINTS_SQL.new : CHECKPOINTS_SQL.old}) c`,
        )
      ).rows;
      line(
        'wal',
        `records ${wal.wal_records}`,
        `fpi ${wal.wal_fpi}`,
        `bytes ${wal.wal_bytes}`,
        `checkpoints timed ${wal.timed}`,
        `requested ${wal.requested}`,
      );
    }
  };

  const running = (async () => {
    while (!stopped) {
      const started = Date.now();
      try {
        await sample();
      } catch (error) {
        line('error', (error as Error).message);
      }
      await new Promise((done) =>
        setTimeout(done, Math.max(0, PERIOD_MS - (Date.now() - started))),
      );
    }
  })();

  return {
    async stop() {
      stopped = true;
      await running;
      await client.end().catch(() => undefined);
      await new Promise((done) => out.end(done));
    },
  };
}

/**
 * The machine's CPU so far, in clock ticks of all cores: user (with nice), system (with irq),
 * idle, iowait, steal.
 */
function machineTicks(): number[] {
  const [user, nice, system, idle, iowait, irq, softirq, steal] = readFileSync('/proc/stat', 'utf8')
    .split('\n', 1)[0]
    .trim()
    .split(/\s+/)
    .slice(1, 9)
    .map(Number);
  return [user + nice, system + irq + softirq, idle, iowait, steal];
}

/** The service's CPU so far, in µs: all of it, and its event loop's. */
function serviceCpuUs(pid: number): [number, number] {
  return [processCpuUs(pid), eventLoopCpuUs(pid)];
}
