/**
 * `npm run bench:subscription`: GET <SUB_URL>/sub/<token> as client apps fetch it, in each of the
 * four formats (base64, xray-json, mihomo, sing-box), with 20 nodes in the user's share
 * (ROUTING_NODES_MAX=20 of 100 online nodes), the device known by its HWID, on the built service
 * run as an operator runs it, beside the reference server `bench/reference/baseline-b.mjs`
 * measured in the same run (alternating rounds, the same PostgreSQL). Prints fetches per second,
 * p99 and CPU per fetch of each, and the ratio (target ≥ 0.4 × the reference).
 * BENCH_SUB_FORMATS=base64,mihomo measures only those.
 */
import { startFixture } from './lib/fixture';
import { alternatingRounds, comparison, type Target } from './lib/cpu-load';
import { BENCH } from './lib/load';
import { loadAverage, peakRssMiB } from './lib/processes';
import { seedDemoPlans, seedNodes, subscribe } from './lib/seed';

const NODES = 100;
const SHARE = 20;
const TARGET_RATIO = 0.4;
/** Each format with the User-Agent of an app that is given it. */
const FORMATS = [
  ['base64', 'v2rayNG/1.8.5'],
  ['xray-json', 'Happ/2.3.1'],
  ['mihomo', 'clash-verge/v2.2.3'],
  ['sing-box', 'SFA/1.11.4 (Android 14)'],
] as const;

async function main(): Promise<void> {
  const loadBefore = loadAverage();
  const fixture = await startFixture({
    env: {
      ROUTING_NODES_MAX: String(SHARE),
      // The seeded nodes' hosts answer nothing: the health check would mark them offline.
      NODE_HEALTH_INTERVAL_S: '86400',
    },
  });
  try {
    await seedDemoPlans(fixture.service.env);
    await seedNodes(fixture.sql, NODES);
    const signUp = await fetch(`${fixture.service.url}/auth/seed`, { method: 'POST' });
    const { access_token: accessToken, user } = (await signUp.json()) as {
      access_token: string;
      user: { id: string };
    };
    await subscribe(fixture.sql, [user.id]);
    const devices = await fetch(`${fixture.service.url}/users/me/devices`, {
      headers: { authorization: `Bearer ${accessToken}` },
    });
    const { subscription_url: link } = (await devices.json()) as { subscription_url: string };
    const origin = new URL(fixture.service.url).origin;
    const linkUrl = `${origin}${new URL(link).pathname}`;
    const baseline: Target = { url: `${fixture.baseline.url}/users/me` };

    const lines = [
      '',
      `GET /sub/<token> with ${SHARE} nodes in the share (of ${NODES} online), the device known by its HWID, ${BENCH.connections} connections, median of ${BENCH.rounds} alternating rounds of ${BENCH.durationS} s per format (after 2 s warm-up each)`,
      'service: node dist/main.js, NODE_ENV=production, default LOG_LEVEL; reference: bench/reference/baseline-b.mjs',
    ];
    const only = process.env.BENCH_SUB_FORMATS?.split(',');
    for (const [format, userAgent] of FORMATS.filter(([name]) => !only || only.includes(name))) {
      const headers = { 'user-agent': userAgent, 'x-hwid': 'bench-device-0001' };
      const check = await fetch(linkUrl, { headers });
      const body = await check.text();
      if (check.status !== 200 || !check.headers.get('subscription-userinfo')) {
        throw new Error(`the link answered ${check.status} for ${format}: ${body.slice(0, 200)}`);
      }
      if (check.headers.get('announce')) {
        throw new Error(`the link has nothing to connect to: ${check.headers.get('announce')}`);
      }
      const service: Target = { url: linkUrl, headers };
      const rounds = await alternatingRounds(fixture, () => ({ target: service }), baseline);
      lines.push('', `format ${format} (User-Agent ${userAgent}, ${body.length} bytes)`);
      lines.push(...comparison(rounds, TARGET_RATIO).lines);
    }
    lines.push(
      '',
      `service peak resident memory (VmHWM): ${peakRssMiB(fixture.service.pid).toFixed(0)} MiB`,
      `load average before: ${loadBefore}; after: ${loadAverage()} (2 cores)`,
      '',
    );
    process.stdout.write(lines.join('\n'));
  } finally {
    await fixture.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
