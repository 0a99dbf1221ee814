import { randomUUID } from 'node:crypto';
import { MetricsServer } from '../src/metrics/metrics-server';
import { HealthService } from '../src/nodes/health.service';
import { SessionTokens } from '../src/nodes/session-token';
import { startBillingWorld, WALLET, type BillingWorld } from './fakes/billing';
import { controlClock } from './fakes/clock';
import { tonTransaction } from './fakes/toncenter';
import { startTestApp, type TestApp } from './harness/app';
import { newUser, savePlan, type TestUser } from './harness/factories';
import { freePort, metricValue, parseMetrics, type Sample } from './harness/metrics';
import { createNode, subscribedUser, tcpListener } from './harness/nodes';

const TOKEN = 'metrics-token-0123456789abcdef';

describe('Prometheus metrics on their own listener', () => {
  let world: BillingWorld;
  let t: TestApp;
  let metricsUrl: string;
  let owner: TestUser;

  const scrape = async (): Promise<Sample[]> => {
    const res = await fetch(metricsUrl, { headers: { Authorization: `Bearer ${TOKEN}` } });
    expect(res.status).toBe(200);
    return parseMetrics(await res.text());
  };

  beforeAll(async () => {
    const port = await freePort();
    world = await startBillingWorld(
      { USD: '2.5' },
      {
        METRICS_PORT: String(port),
        METRICS_TOKEN: TOKEN,
        METRICS_CACHE_S: '0',
        METRICS_COUNTS_CACHE_S: '0',
        TRUST_PROXY: '1',
      },
    );
    t = world.t;
    expect(await t.app.get(MetricsServer).start()).toBe(port);
    metricsUrl = `http://127.0.0.1:${port}/metrics`;
    owner = await newUser(t, 'owner');
    await savePlan(t, owner);
  });
  afterAll(() => world.close());

  it('answers only with the bearer token, compared whole', async () => {
    expect((await fetch(metricsUrl)).status).toBe(401);
    for (const wrong of [`Bearer ${TOKEN}x`, `Bearer ${TOKEN.slice(0, -1)}`, TOKEN, 'Bearer ']) {
      expect([
        wrong,
        (await fetch(metricsUrl, { headers: { Authorization: wrong } })).status,
      ]).toEqual([wrong, 401]);
    }
    const samples = await scrape();
    for (const name of [
      'process_cpu_user_seconds_total',
      'nodejs_eventloop_lag_seconds',
      'nodejs_heap_size_used_bytes',
    ]) {
      expect(samples.some((s) => s.name === name)).toBe(true);
    }
    expect((await fetch(metricsUrl.replace('/metrics', '/other'))).status).toBe(404);
  });

  it('is not served on the public port', async () => {
    await t.http().get('/api/v1/metrics').set(owner.bearer).expect(404);
    // Outside /api the web app answers (its page, or 404 when it is not built): never the figures.
    const res = await t.http().get('/metrics').set(owner.bearer);
    expect([200, 404]).toContain(res.status);
    expect(res.headers['content-type']).not.toMatch(/text\/plain/);
    expect(res.text).not.toContain('# HELP');
  });

  it('times requests by route template and status class, including refused ones', async () => {
    const before = await scrape();
    const buyer = await newUser(t, 'seed');
    for (let i = 0; i < 3; i++)
      await t.http().get('/api/v1/users/me').set(buyer.bearer).expect(200);
    await t.http().get('/api/v1/users/me').expect(401);
    await t
      .http()
      .get(`/api/v1/made-up/${'x'.repeat(20)}`)
      .set(buyer.bearer)
      .expect(404);
    await t.http().get('/api/v1/invoices/00000000-0000-4000-8000-000000000000').set(buyer.bearer);
    for (let i = 0; i < 6; i++) {
      await t
        .http()
        .post('/api/v1/auth/admin/login')
        .set('X-Forwarded-For', '203.0.113.44')
        .send({ username: 'owner-guess', password: 'wrong password' });
    }
    const after = await scrape();
    const moved = (labels: Record<string, string>) =>
      metricValue(after, 'http_request_duration_seconds_count', labels) -
      metricValue(before, 'http_request_duration_seconds_count', labels);

    expect(moved({ method: 'GET', route: '/api/v1/users/me', status_class: '2xx' })).toBe(3);
    expect(moved({ method: 'GET', route: '/api/v1/users/me', status_class: '4xx' })).toBe(1);
    expect(moved({ route: '/api/v1/invoices/:id' })).toBe(1);
    expect(moved({ route: 'unmatched', status_class: '4xx' })).toBe(1);
    // Five refused by the password check, the sixth by the throttle.
    expect(moved({ method: 'POST', route: '/api/v1/auth/admin/login', status_class: '4xx' })).toBe(
      6,
    );
    const routes = new Set(after.map((s) => s.labels.route).filter(Boolean));
    expect([...routes].some((r) => r.includes('made-up') || r.includes('0000'))).toBe(false);
  });

  it('a paid invoice moves the payment, money and subscription series; a new account the user count', async () => {
    const before = await scrape();
    const buyer = await newUser(t, 'seed');
    const ordered = await t
      .http()
      .post('/api/v1/invoices')
      .set(buyer.bearer)
      .send({ plan_name: 'monthly', currency: 'USD', provider: 'ton' })
      .expect(201);
    const invoice = ordered.body as { id: string; amount: string; payment: { comment: string } };
    const pending = await scrape();
    expect(
      metricValue(pending, 'vpn_invoices_pending') - metricValue(before, 'vpn_invoices_pending'),
    ).toBe(1);

    world.toncenter.transactions.push(
      tonTransaction({
        to: WALLET.toRawString().toUpperCase(),
        value: invoice.amount,
        comment: invoice.payment.comment,
      }),
    );
    controlClock(t).advance(5_000);
    await t.http().post(`/api/v1/invoices/${invoice.id}/confirm`).set(buyer.bearer).expect(200);

    const after = await scrape();
    const delta = (name: string, labels: Record<string, string> = {}) =>
      metricValue(after, name, labels) - metricValue(before, name, labels);
    expect(delta('vpn_payments_confirmed_total', { currency: 'TON', provider: 'ton' })).toBe(1);
    expect(delta('vpn_money_received_total', { currency: 'TON', provider: 'ton' })).toBeCloseTo(
      Number(invoice.amount) / 1e9,
      9,
    );
    expect(delta('vpn_subscriptions_active')).toBe(1);
    expect(delta('vpn_invoices_pending')).toBe(0);
    expect(delta('vpn_users', { kind: 'seed' })).toBe(1);
    expect(metricValue(after, 'vpn_users', { kind: 'owner' })).toBeGreaterThanOrEqual(1);
    // Every group read (nodes too: none without a nodes table, rather than a failure).
    expect(metricValue(after, 'vpn_metrics_read_failures_total')).toBe(0);
  });

  it('a fetch of a subscription link moves the fetch series; a new device the device count', async () => {
    const before = await scrape();
    const user = await subscribedUser(t);
    const devices = await t.http().get('/api/v1/users/me/devices').set(user.bearer).expect(200);
    const path = new URL(devices.body.subscription_url as string).pathname;
    await t.http().get(path).set('User-Agent', 'v2rayNG/1.8.5').expect(200);
    await t.http().get(path).set('User-Agent', 'v2rayNG/1.8.5').expect(200);
    const after = await scrape();
    const delta = (name: string, labels: Record<string, string> = {}) =>
      metricValue(after, name, labels) - metricValue(before, name, labels);
    // No node online here: each fetch is answered with the entry that says so.
    expect(delta('vpn_subscription_fetches_total', { format: 'base64', outcome: 'no_node' })).toBe(
      2,
    );
    expect(delta('vpn_devices_created_total', { source: 'app' })).toBe(1);
    expect(delta('vpn_devices', { source: 'app' })).toBe(1);
  });

  it("a node's health, reports and token validations move the node and traffic series", async () => {
    const before = await scrape();
    const listener = await tcpListener();
    const node = await createNode(t, owner, { tunnel_port: listener.port, traffic_multiplier: 2 });
    const name = node.name as string;
    await t.app.get(HealthService).checkAll();
    await listener.close();
    const user = await subscribedUser(t);
    const secret = { 'X-Internal-Secret': t.settings.internalSecret };
    const report = {
      node_id: node.id,
      report_id: randomUUID(),
      entries: [{ user_id: user.user.id, bytes_up: 300, bytes_down: 700 }],
    };
    await t.http().post('/api/v1/internal/traffic').set(secret).send(report).expect(200);
    await t.http().post('/api/v1/internal/traffic').set(secret).send(report).expect(200);
    const token = t.app
      .get(SessionTokens)
      .issue(user.user.id, node.id, Math.floor(Date.now() / 1000) + 60);
    for (let i = 0; i < 2; i++) {
      await t
        .http()
        .post('/api/v1/internal/validate')
        .set(secret)
        .send({ token, node_id: node.id })
        .expect(200);
    }

    const after = await scrape();
    const delta = (metric: string, labels: Record<string, string> = {}) =>
      metricValue(after, metric, labels) - metricValue(before, metric, labels);
    expect(delta('vpn_nodes', { status: 'online', provision_state: 'new' })).toBe(1);
    const ageOf = (samples: typeof after) =>
      samples.find((s) => s.name === 'vpn_node_last_report_age_seconds' && s.labels.node === name);
    // A node that reports on time has no series of its own; the oldest report is at least its.
    expect(ageOf(after)).toBeUndefined();
    expect(metricValue(after, 'vpn_node_last_report_age_max_seconds')).toBeGreaterThanOrEqual(0);
    expect(delta('vpn_traffic_reports_total', { result: 'applied' })).toBe(1);
    // The repeat counts nothing, and is counted as refused.
    expect(delta('vpn_traffic_reports_total', { result: 'refused' })).toBe(1);
    expect(delta('vpn_traffic_bytes_total')).toBe(2_000);
    expect(delta('vpn_token_validations_total', { result: 'valid' })).toBe(1);
    expect(delta('vpn_token_validations_total', { result: 'used' })).toBe(1);

    // Its agent silent for ten minutes: the node is named, with how long.
    await t.dataSource.query(
      `UPDATE nodes SET provision_state = 'ready', last_report_at = now() - interval '10 minutes'
        WHERE id = $1`,
      [node.id],
    );
    const silent = await scrape();
    expect(ageOf(silent)?.value).toBeGreaterThanOrEqual(600);
    expect(ageOf(silent)?.value).toBeLessThan(660);
    expect(metricValue(silent, 'vpn_node_last_report_age_max_seconds')).toBeGreaterThanOrEqual(600);
  });
});

describe('metrics without a token, and turned off', () => {
  it('answers anyone who reaches the metrics address when METRICS_TOKEN is unset', async () => {
    const port = await freePort();
    const t = await startTestApp({ METRICS_PORT: String(port) });
    try {
      await t.app.get(MetricsServer).start();
      const res = await fetch(`http://127.0.0.1:${port}/metrics`);
      expect(res.status).toBe(200);
      expect(await res.text()).toContain('http_request_duration_seconds');
    } finally {
      await t.close();
    }
    // Closed with the app.
    await expect(fetch(`http://127.0.0.1:${port}/metrics`)).rejects.toThrow();
  });

  it('opens no listener with METRICS_PORT=0', async () => {
    const t = await startTestApp({ METRICS_PORT: '0' });
    try {
      expect(await t.app.get(MetricsServer).start()).toBeNull();
    } finally {
      await t.close();
    }
  });
});
