import { Inject, Injectable } from '@nestjs/common';
import { Counter, Gauge } from 'prom-client';
import { isKnownCurrency, minorDigits } from '../billing/money';
import { type Settings } from '../config/settings';
import { SETTINGS } from '../config/settings.module';
import { AGENT_SILENT_AFTER_S } from '../nodes/node-status';
import { BusinessMetricsRepository, type PaymentTotals } from './business-metrics.repository';
import { CachedRead } from '../common/concurrency/cached-read';
import { Metrics } from './metrics.service';

/** A scrape waits this long for a group's read before answering with the last values. */
export const METRICS_READ_TIMEOUT_MS = 2_000;

/**
 * Metrics read from the database when Prometheus scrapes, one read per group, cached for
 * METRICS_CACHE_S so several scrapers cost one read; the counts of whole tables (accounts,
 * devices, payments: each a walk over its table, seconds long at a million rows) for
 * METRICS_COUNTS_CACHE_S. A scrape waits METRICS_READ_TIMEOUT_MS for a read and answers with the
 * last values meanwhile; a group never read successfully exports no sample rather than a made-up
 * zero.
 */
@Injectable()
export class BusinessMetrics {
  constructor(
    metrics: Metrics,
    repository: BusinessMetricsRepository,
    @Inject(SETTINGS) settings: Settings,
  ) {
    const cached = <T>(group: string, read: () => Promise<T>, ttlS = settings.metricsCacheS) => {
      const cache = new CachedRead(read, ttlS * 1000);
      const onFailure = () => metrics.readFailures.inc({ group });
      return { get: () => cache.within(METRICS_READ_TIMEOUT_MS, onFailure) };
    };
    const registers = [metrics.registry];

    const users = cached('users', () => repository.userCounts(), settings.metricsCountsCacheS);
    new Gauge({
      name: 'vpn_users',
      help: 'Accounts by kind (seed, telegram, or the staff role).',
      labelNames: ['kind'] as const,
      registers,
      async collect() {
        const counts = await users.get();
        this.reset();
        for (const { kind, count } of counts?.byKind ?? []) this.set({ kind }, count);
      },
    });
    new Gauge({
      name: 'vpn_subscriptions_active',
      help: 'Accounts whose subscription has not expired.',
      registers,
      async collect() {
        const counts = await users.get();
        this.reset();
        if (counts) this.set(counts.activeSubscriptions);
      },
    });

    const devices = cached(
      'devices',
      () => repository.deviceCounts(),
      settings.metricsCountsCacheS,
    );
    new Gauge({
      name: 'vpn_devices',
      help: 'Devices of accounts by how their apps are told apart (hwid, app, link).',
      labelNames: ['source'] as const,
      registers,
      async collect() {
        const counts = await devices.get();
        this.reset();
        for (const { source, count } of counts ?? []) this.set({ source }, count);
      },
    });

    const pending = cached('invoices', () => repository.pendingInvoices());
    new Gauge({
      name: 'vpn_invoices_pending',
      help: 'Invoices waiting for their payment.',
      registers,
      async collect() {
        const count = await pending.get();
        this.reset();
        if (count !== undefined) this.set(count);
      },
    });

    const nodes = cached('nodes', () => repository.nodeCounts());
    new Gauge({
      name: 'vpn_nodes',
      help: 'Nodes by health status and provision state.',
      labelNames: ['status', 'provision_state'] as const,
      registers,
      async collect() {
        const counts = await nodes.get();
        this.reset();
        for (const n of counts?.byState ?? []) {
          this.set({ status: n.status, provision_state: n.provisionState }, n.count);
        }
      },
    });
    new Gauge({
      name: 'vpn_node_last_report_age_max_seconds',
      help: 'Seconds since the oldest last traffic report of any node that has reported.',
      registers,
      async collect() {
        const counts = await nodes.get();
        this.reset();
        if (counts?.oldestReportAge != null) this.set(counts.oldestReportAge);
      },
    });
    // One series a silent node only: one a node is 5,000 series a scrape at 5,000 nodes.
    new Gauge({
      name: 'vpn_node_last_report_age_seconds',
      help: `Seconds since the last traffic report of each provisioned node whose agent has been silent for over ${AGENT_SILENT_AFTER_S} s (two report periods); nodes reporting on time have no series.`,
      labelNames: ['node'] as const,
      registers,
      async collect() {
        const counts = await nodes.get();
        this.reset();
        for (const r of counts?.silentReportAges ?? []) this.set({ node: r.node }, r.seconds);
      },
    });

    // Totals over every paid invoice: monotonic, so exported as counters for rate() and increase().
    const payments = cached(
      'payments',
      () => repository.paymentTotals(),
      settings.metricsCountsCacheS,
    );
    const paymentCounter = (name: string, help: string, valueOf: (t: PaymentTotals) => number) =>
      new Counter({
        name,
        help,
        labelNames: ['currency', 'provider'] as const,
        registers,
        async collect() {
          const totals = await payments.get();
          this.reset();
          for (const t of totals ?? []) {
            this.inc({ currency: t.currency, provider: t.provider }, valueOf(t));
          }
        },
      });
    paymentCounter(
      'vpn_payments_confirmed_total',
      'Confirmed payments (paid invoices) by the currency received and provider.',
      (t) => t.count,
    );
    paymentCounter(
      'vpn_money_received_total',
      'Money received on paid invoices, in whole units of the currency, by currency and provider.',
      (t) => inWholeUnits(t.amountMinor, t.currency),
    );
  }
}

function inWholeUnits(amountMinor: bigint, currency: string): number {
  const digits = isKnownCurrency(currency) ? minorDigits(currency) : 0;
  return Number(amountMinor) / 10 ** digits;
}
