import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { LRParser } from '@lezer/lr';
import { Metrics } from '../src/metrics/metrics.service';
import { startTestApp, type TestApp } from './harness/app';

// The package's types are ESM-only; jest loads its CommonJS build.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { parser } = require('@prometheus-io/lezer-promql') as { parser: LRParser };

const MONITORING = resolve(__dirname, '../deploy/monitoring');
const read = (path: string) => readFileSync(resolve(MONITORING, path), 'utf8');

interface Panel {
  type: string;
  title: string;
  datasource?: { type: string; uid: string };
  targets?: { expr: string; datasource?: { uid: string } }[];
}

const dashboard = JSON.parse(read('grafana/dashboards/vpn-service.json')) as {
  uid: string;
  panels: Panel[];
  __inputs?: unknown;
};
const queries = dashboard.panels.flatMap((p) =>
  (p.targets ?? []).map((t) => ({ panel: p.title, expr: t.expr, uid: t.datasource?.uid })),
);

/** The metric names a PromQL expression selects; throws on a syntax error. */
function metricNames(expr: string): string[] {
  const names: string[] = [];
  let error: number | null = null;
  parser.parse(expr).iterate({
    enter(node) {
      if (node.type.isError) error ??= node.from;
      if (node.name === 'Identifier' && node.node.parent?.name === 'VectorSelector') {
        names.push(expr.slice(node.from, node.to));
      }
    },
  });
  if (error !== null) throw new Error(`PromQL syntax error at ${error}: ${expr}`);
  return names;
}

describe('the Grafana dashboard and Prometheus configuration', () => {
  let t: TestApp;
  let exported: Set<string>;
  beforeAll(async () => {
    t = await startTestApp();
    exported = new Set();
    // The series names each metric of the service's registry exports.
    for (const metric of await t.app.get(Metrics).registry.getMetricsAsJSON()) {
      const type = String(metric.type);
      const suffixes =
        type === 'histogram'
          ? ['_bucket', '_sum', '_count']
          : type === 'summary'
            ? ['', '_sum', '_count']
            : [''];
      for (const suffix of suffixes) exported.add(metric.name + suffix);
    }
  });
  afterAll(() => t.close());

  it('is a self-contained dashboard on the provisioned datasource, with every area covered', () => {
    expect(dashboard.__inputs).toBeUndefined();
    const datasourceUid = /uid:\s*(\S+)/.exec(
      read('grafana/provisioning/datasources/prometheus.yml'),
    )?.[1];
    expect(datasourceUid).toBe('vpn-prometheus');
    expect(queries.length).toBeGreaterThan(15);
    for (const query of queries)
      expect([query.panel, query.uid]).toEqual([query.panel, datasourceUid]);
    const rows = dashboard.panels.filter((p) => p.type === 'row').map((p) => p.title);
    expect(rows).toEqual(['Traffic', 'Revenue', 'Nodes', 'Errors', 'Latency', 'Jobs']);
    expect(read('grafana/provisioning/dashboards/vpn-service.yml')).toContain(
      'path: /var/lib/grafana/dashboards',
    );
  });

  it('parses every PromQL expression and names only metrics the service exports', () => {
    const missing: string[] = [];
    for (const query of queries) {
      const names = metricNames(query.expr);
      expect([query.panel, names.length > 0]).toEqual([query.panel, true]);
      for (const name of names) if (!exported.has(name)) missing.push(`${query.panel}: ${name}`);
    }
    expect(missing).toEqual([]);
  });

  it('catches a misspelt metric and a broken expression (the check itself works)', () => {
    expect(() => metricNames('sum(rate(http_request_duration_seconds_count[5m])')).toThrow(
      /syntax error/,
    );
    expect(exported.has(metricNames('rate(vpn_payments_confirmd_total[5m])')[0])).toBe(false);
  });

  it('scrapes the service at its metrics port', () => {
    const config = read('prometheus.yml');
    expect(config).toMatch(/metrics_path: \/metrics/);
    expect(config).toMatch(/targets: \['service:9464'\]/);
    expect(readFileSync(resolve(__dirname, '../docker-compose.yml'), 'utf8')).toMatch(
      /profiles: \[monitoring\][\s\S]*profiles: \[monitoring\]/,
    );
  });
});
