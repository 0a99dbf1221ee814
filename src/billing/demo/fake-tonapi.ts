import { type FakeServer, startFakeServer } from './fake-http';

/**
 * tonapi.io's `GET /v2/rates?tokens=ton&currencies=<codes>`, answering
 * `{"rates":{"TON":{"prices":{"USD":<number>},...}}}` with upper-case currency keys, as the real one.
 */
export interface FakeTonapi extends FakeServer {
  /** The TON price in a currency, written into the JSON exactly as given (e.g. `"1.02"`). */
  rates: Map<string, string>;
  /** While true, every request answers 500. */
  down: boolean;
  /** Rate requests that asked for this currency (any case). */
  requestsFor(currency: string): number;
}

export async function startFakeTonapi(initial: Record<string, string> = {}): Promise<FakeTonapi> {
  const rates = new Map(Object.entries(initial));
  const fake = {} as FakeTonapi;
  const server = await startFakeServer((request) => {
    if (fake.down) return { status: 500, body: { error: 'internal error' } };
    if (request.method !== 'GET' || request.path !== '/v2/rates') {
      return { status: 404, body: { error: 'not found' } };
    }
    const codes = (request.query.currencies ?? '').split(',').filter(Boolean);
    const prices = codes
      .map((c) => c.toUpperCase())
      .filter((c) => rates.has(c))
      .map((c) => `"${c}":${rates.get(c)}`)
      .join(',');
    const diff = codes.map((c) => `"${c.toUpperCase()}":"-0.51%"`).join(',');
    // Built as text so the rate's digits are exactly the ones the test chose.
    return {
      status: 200,
      body: `{"rates":{"TON":{"prices":{${prices}},"diff_24h":{${diff}},"diff_7d":{${diff}},"diff_30d":{${diff}}}}}`,
    };
  });
  return Object.assign(fake, server, {
    rates,
    down: false,
    requestsFor: (currency: string) =>
      server.requests.filter(
        (r) => r.path === '/v2/rates' && r.query.currencies?.toUpperCase() === currency,
      ).length,
  });
}
