import { loadSettings } from '../config/settings';
import { BusinessMetrics } from './business-metrics';
import type { BusinessMetricsRepository } from './business-metrics.repository';
import { Metrics } from './metrics.service';

const SECRETS = {
  JWT_ACCESS_SECRET: 'business-metrics-spec-jwt-access-secret-01',
  INTERNAL_SECRET: 'business-metrics-spec-internal-secret-0123',
  PROXY_TOKEN_SECRET: 'business-metrics-spec-proxy-token-secret-0',
  DATA_ENCRYPTION_KEY: 'business-metrics-spec-data-encryption-key0',
  SEED_PEPPER: 'business-metrics-spec-seed-pepper-0123456789',
};

describe('BusinessMetrics', () => {
  it('reads the counts of whole tables once per METRICS_COUNTS_CACHE_S, the other groups once per METRICS_CACHE_S', async () => {
    const settings = loadSettings({
      NODE_ENV: 'production',
      DATABASE_URL: 'postgresql://metrics@db.example.test/metrics',
      PUBLIC_API_URL: 'https://api.example.test',
      APP_URL: 'https://app.example.test',
      METRICS_CACHE_S: '0',
      METRICS_COUNTS_CACHE_S: '3600',
      ...SECRETS,
    });
    const reads = { users: 0, devices: 0, payments: 0, invoices: 0, nodes: 0 };
    let accounts = 10;
    const repository = {
      userCounts: () => {
        reads.users++;
        return Promise.resolve({
          byKind: [{ kind: 'seed', count: accounts }],
          activeSubscriptions: 0,
        });
      },
      deviceCounts: () => {
        reads.devices++;
        return Promise.resolve([]);
      },
      paymentTotals: () => {
        reads.payments++;
        return Promise.resolve([]);
      },
      pendingInvoices: () => {
        reads.invoices++;
        return Promise.resolve(reads.invoices);
      },
      nodeCounts: () => {
        reads.nodes++;
        return Promise.resolve({ byState: [], oldestReportAge: null, silentReportAges: [] });
      },
    } as unknown as BusinessMetricsRepository;
    const metrics = new Metrics();
    new BusinessMetrics(metrics, repository, settings);

    const first = await metrics.registry.metrics();
    accounts = 11;
    const second = await metrics.registry.metrics();

    expect(first).toContain('vpn_users{kind="seed"} 10');
    // The table counts are the first read's until the hour is over; the others are read anew.
    expect(second).toContain('vpn_users{kind="seed"} 10');
    expect(second).toContain('vpn_invoices_pending 2');
    expect(reads).toEqual({ users: 1, devices: 1, payments: 1, invoices: 2, nodes: 2 });
  });
});
