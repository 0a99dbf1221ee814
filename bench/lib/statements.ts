/**
 * PostgreSQL's own timing of the statements a benchmark runs, from `pg_stat_statements` (loaded
 * when the fixture starts with `statements: true`; `BENCH_STATEMENTS=1` on the benchmarks that
 * offer it): where a request's database time goes, beside the client's clock.
 */
type Sql = (text: string) => Promise<Record<string, unknown>[]>;

/** Starts counting from zero: call it once the warm-up is over. */
export async function resetStatements(sql: Sql): Promise<void> {
  await sql('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
  await sql('SELECT pg_stat_statements_reset()');
}

/**
 * The statements called at least `minCalls` times since the reset, those that took the most time
 * in all first: calls, mean planning and run time in `unit`, the slowest run, and the start of the
 * text. A block of lines under `title`, to print.
 */
export async function statementTimes(
  sql: Sql,
  options: { title: string; minCalls: number; unit: 'ms' | 'µs'; limit?: number },
): Promise<string> {
  const scale = options.unit === 'ms' ? 1 : 1000;
  const digits = options.unit === 'ms' ? 2 : 1;
  const rows = await sql(
    `SELECT calls, round(total_plan_time::numeric * ${scale} / calls, ${digits}) AS plan,
            round(total_exec_time::numeric * ${scale} / calls, ${digits}) AS run,
            round(max_exec_time::numeric * ${scale}, ${digits}) AS slowest,
            left(regexp_replace(query, '\\s+', ' ', 'g'), 100) AS query
       FROM pg_stat_statements WHERE calls >= ${Math.trunc(options.minCalls)}
      ORDER BY total_exec_time + total_plan_time DESC LIMIT ${Math.trunc(options.limit ?? 10)}`,
  );
  return [
    `${options.title}, mean ${options.unit}:`,
    ...rows.map(
      (r) =>
        `  ${String(r.calls)} × plan ${String(r.plan)} + run ${String(r.run)} (slowest ${String(r.slowest)}): ${String(r.query)}`,
    ),
    '',
  ].join('\n');
}
