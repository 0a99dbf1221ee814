/**
 * `npm run bench:billing`: the billing statements that run often or over growing tables, on
 * 100,000 invoices (and as many Telegram charges and received TON transfers): each one's plan and
 * execution time with the service's indexes, beside the same statement with those indexes dropped
 * (in a transaction rolled back), measured in the same run on the same data.
 */
import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../src/database/data-source';
import { ENTITIES } from '../src/entities';
import { startStandaloneApp } from '../scripts/lib/standalone-app';
import { fillBilling, HOT_QUERIES, planOf } from '../test/harness/billing-volume';

const ROWS = Number(process.env.BENCH_ROWS ?? 100_000);
const ROUNDS = 5;
/** The indexes migration 0013 added for these statements; the baseline runs without them. */
const ADDED = [
  'IDX_invoices_pending_expiry',
  'IDX_invoices_created',
  'IDX_telegram_payments_created',
  'IDX_received_payments_unmatched',
  'IDX_received_payments_unsettled',
];

const say = (text: string): void => {
  process.stdout.write(`${text}\n`);
};

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[values.length >> 1];

async function main(): Promise<void> {
  const standalone = await startStandaloneApp();
  const db = new DataSource(dataSourceOptions(standalone.databaseUrl, { entities: ENTITIES }));
  await db.initialize();
  try {
    await db.query(
      `INSERT INTO plans (name, duration_days, traffic_limit_bytes) VALUES ('monthly', 30, 1)`,
    );
    const [user] = (await db.query(
      `INSERT INTO users (id) VALUES (gen_random_uuid()) RETURNING id`,
    )) as { id: string }[];
    const started = Date.now();
    await fillBilling(db, user.id, ROWS);
    say(`${ROWS} invoices filled in ${Date.now() - started} ms\n`);
    say('| statement | plan with the indexes | ms | plan without them | ms |');
    say('| --- | --- | --- | --- | --- |');
    for (const query of HOT_QUERIES) {
      const withIdx: number[] = [];
      const without: number[] = [];
      let planWith = '';
      let planWithout = '';
      for (let round = 0; round < ROUNDS; round += 1) {
        const a = await planOf(db, query, { analyze: true });
        const b = await planOf(db, query, { analyze: true, without: ADDED });
        withIdx.push(a.executionMs ?? NaN);
        without.push(b.executionMs ?? NaN);
        planWith = a.nodes.join(' > ');
        planWithout = b.nodes.join(' > ');
      }
      say(
        `| ${query.name} | ${planWith} | ${median(withIdx).toFixed(2)} | ${planWithout} | ${median(without).toFixed(2)} |`,
      );
    }
  } finally {
    await db.destroy();
    await standalone.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
