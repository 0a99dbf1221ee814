import { clientModule, type ClientModule } from './client-module';

const { ApiError, createClient, REFRESH_GENERATION_KEY, REFRESH_LOCK } = clientModule;

type ApiErrorInstance = ClientModule.ApiError;
type ClientOptions = ClientModule.ClientOptions;
type FetchInit = ClientModule.FetchInit;
type FetchLike = ClientModule.FetchLike;
type LockManagerLike = ClientModule.LockManagerLike;
type StorageLike = ClientModule.StorageLike;

const BASE_URL = 'https://api.example.test';

interface Call {
  method: string;
  /** The path under `/api/v1`, without the query. */
  path: string;
  url: string;
  init: FetchInit;
}

type Handler = (call: Call) => Response | Promise<Response>;

/** Fake answers never yield to timers, so a runaway retry loop would hang jest, not fail it. */
const MAX_CALLS = 50;

/** A fetch that records every call and answers from `handler`, as one browser's network would. */
function fakeNetwork(handler: Handler) {
  const calls: Call[] = [];
  const fetch: FetchLike = async (url, init) => {
    if (calls.length >= MAX_CALLS) throw new Error(`more than ${MAX_CALLS} calls`);
    const path = new URL(url).pathname.replace(/^\/api\/v1/, '');
    const call = { method: init.method, path, url, init };
    calls.push(call);
    return handler(call);
  };
  const count = (method: string, path: string) =>
    calls.filter((call) => call.method === method && call.path === path).length;
  return { fetch, calls, count };
}

function json(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'Content-Type': 'application/json' },
  });
}

function problem(status: number, code: string, message: string, extra: object = {}): Response {
  return json(status, { statusCode: status, error: 'Error', code, message, ...extra });
}

const unauthenticated = () => problem(401, 'UNAUTHENTICATED', 'no session');
const refreshInvalid = () => problem(401, 'REFRESH_INVALID', 'refresh cookie missing');
const ME = { id: '5b0c1d9e-8a52-4c39-9a55-2f7b7f0a1c11', role: null, username: null };

/**
 * One browser's cookie jar on the server side: calls fail with 401 until a refresh succeeds, and
 * a refresh is held at `gate` so that tests can line calls up behind it.
 */
function expiredSession(gate: Promise<void> = Promise.resolve()) {
  let renewed = false;
  return fakeNetwork(async (call) => {
    if (call.path === '/auth/refresh') {
      await gate;
      renewed = true;
      return json(200, { user: ME });
    }
    return renewed ? json(200, ME) : unauthenticated();
  });
}

function deferred() {
  let resolve: () => void = () => undefined;
  const promise = new Promise<void>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}

/** Lets pending promise callbacks and fake network answers run until `condition` holds. */
async function until(condition: () => boolean): Promise<void> {
  for (let turn = 0; turn < 1000 && !condition(); turn += 1) {
    await new Promise((resolve) => setImmediate(resolve));
  }
  expect(condition()).toBe(true);
}

/** Web Locks as one browser shares them between tabs, recording what was asked. */
function fakeLocks() {
  const asked: { name: string; ifAvailable: boolean }[] = [];
  const held = new Set<string>();
  const waiting = new Map<string, (() => void)[]>();
  const locks: LockManagerLike = {
    async request(name, { ifAvailable = false }, callback) {
      asked.push({ name, ifAvailable });
      const queue = waiting.get(name) ?? [];
      waiting.set(name, queue);
      if (held.has(name)) {
        if (ifAvailable) return callback(null);
        await new Promise<void>((resolve) => queue.push(resolve));
      }
      held.add(name);
      try {
        return await callback({ name });
      } finally {
        const next = queue.shift();
        if (next) next();
        else held.delete(name);
      }
    },
  };
  return { locks, asked };
}

function fakeStorage(): StorageLike {
  const items = new Map<string, string>();
  return {
    getItem: (key) => items.get(key) ?? null,
    setItem: (key, value) => void items.set(key, value),
  };
}

function makeClient(fetch: FetchLike, path = '/account', extra: Partial<ClientOptions> = {}) {
  const navigate = jest.fn<void, [string]>();
  const client = createClient({
    baseUrl: BASE_URL,
    navigate,
    currentPath: () => path,
    fetch,
    ...extra,
  });
  return { client, navigate };
}

/** The rejection of `promise`, which must be an ApiError. */
async function failure(promise: Promise<unknown>): Promise<ApiErrorInstance> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(ApiError);
  return error as ApiErrorInstance;
}

describe('the session rule: on a 401 refresh silently and retry once', () => {
  it('refreshes once and answers with the retried call', async () => {
    const network = expiredSession();
    const { client, navigate } = makeClient(network.fetch);

    await expect(client.me()).resolves.toEqual(ME);

    expect(network.calls.map((call) => `${call.method} ${call.path}`)).toEqual([
      'GET /users/me',
      'POST /auth/refresh',
      'GET /users/me',
    ]);
    expect(network.calls[1].url).toBe(`${BASE_URL}/api/v1/auth/refresh`);
    for (const call of network.calls) expect(call.init.credentials).toBe('include');
    expect(navigate).not.toHaveBeenCalled();
  });

  it('does not refresh a second time when the retry is refused too', async () => {
    const network = fakeNetwork((call) =>
      call.path === '/auth/refresh' ? json(200, { user: ME }) : unauthenticated(),
    );
    const { client, navigate } = makeClient(network.fetch);

    const error = await failure(client.me());

    expect(error).toMatchObject({ status: 401, code: 'UNAUTHENTICATED' });
    expect(network.count('POST', '/auth/refresh')).toBe(1);
    expect(network.count('GET', '/users/me')).toBe(2);
    expect(navigate).not.toHaveBeenCalled();
  });

  it('sends the app to / once when the refresh fails away from /', async () => {
    const network = fakeNetwork((call) =>
      call.path === '/auth/refresh' ? refreshInvalid() : unauthenticated(),
    );
    const { client, navigate } = makeClient(network.fetch, '/account');

    const error = await failure(client.me());

    expect(error).toMatchObject({ status: 401, code: 'UNAUTHENTICATED' });
    expect(error.cause).toMatchObject({ code: 'REFRESH_INVALID' });
    expect(navigate).toHaveBeenCalledTimes(1);
    expect(navigate).toHaveBeenCalledWith('/');
    // The refresh's own 401 starts no second refresh, and the call is not retried.
    expect(network.count('POST', '/auth/refresh')).toBe(1);
    expect(network.count('GET', '/users/me')).toBe(1);
  });

  it('stays put when the refresh fails on / already', async () => {
    const network = fakeNetwork((call) =>
      call.path === '/auth/refresh' ? refreshInvalid() : unauthenticated(),
    );
    const { client, navigate } = makeClient(network.fetch, '/');

    const error = await failure(client.me());

    expect(error.code).toBe('UNAUTHENTICATED');
    expect(navigate).not.toHaveBeenCalled();
    expect(network.count('POST', '/auth/refresh')).toBe(1);
  });

  it('stays put when the refresh gets no answer at all', async () => {
    const network = fakeNetwork((call) => {
      if (call.path === '/auth/refresh') throw new TypeError('Failed to fetch');
      return unauthenticated();
    });
    const { client, navigate } = makeClient(network.fetch, '/account');

    const error = await failure(client.me());

    expect(error.code).toBe('UNAUTHENTICATED');
    expect(error.cause).toMatchObject({ status: 0, code: 'NETWORK_ERROR' });
    expect(navigate).not.toHaveBeenCalled();
  });

  it('shares one refresh among parallel calls, and retries each of them', async () => {
    const gate = deferred();
    const network = expiredSession(gate.promise);
    const { locks, asked } = fakeLocks();
    const { client } = makeClient(network.fetch, '/account', { locks });

    const answers = Promise.all([1, 2, 3, 4, 5].map(() => client.me()));
    // Every call has had its 401 before the refresh answers.
    await until(
      () => network.count('GET', '/users/me') === 5 && network.count('POST', '/auth/refresh') > 0,
    );
    gate.resolve();

    await expect(answers).resolves.toEqual([ME, ME, ME, ME, ME]);
    expect(network.count('POST', '/auth/refresh')).toBe(1);
    expect(network.count('GET', '/users/me')).toBe(10);
    // One flight: the calls waited on one promise, not in a queue at the lock.
    expect(asked).toEqual([{ name: REFRESH_LOCK, ifAvailable: true }]);
  });

  it('navigates once when the refresh shared by parallel calls fails', async () => {
    const network = fakeNetwork((call) =>
      call.path === '/auth/refresh' ? refreshInvalid() : unauthenticated(),
    );
    const { client, navigate } = makeClient(network.fetch, '/plans');

    const results = await Promise.allSettled([client.me(), client.routing(), client.plans()]);

    expect(results.map((result) => result.status)).toEqual(['rejected', 'rejected', 'rejected']);
    expect(network.count('POST', '/auth/refresh')).toBe(1);
    expect(navigate).toHaveBeenCalledTimes(1);
  });

  it('retries without refreshing when a refresh finished while the call was out', async () => {
    const held = deferred();
    let renewed = false;
    const network = fakeNetwork(async (call) => {
      if (call.path === '/auth/refresh') {
        renewed = true;
        return json(200, { user: ME });
      }
      // The first /users/me left with the old cookie; its 401 arrives after the refresh.
      if (call.path === '/users/me' && network.count('GET', '/users/me') === 1) {
        await held.promise;
        return unauthenticated();
      }
      return renewed ? json(200, ME) : unauthenticated();
    });
    const { client } = makeClient(network.fetch);

    const slow = client.me();
    await until(() => network.count('GET', '/users/me') === 1);
    await client.refresh();
    held.resolve();

    await expect(slow).resolves.toEqual(ME);
    expect(network.count('POST', '/auth/refresh')).toBe(1);
  });

  it('a sign-in waits for a refresh in flight, so that refresh cannot clear its new cookies', async () => {
    const gate = deferred();
    let signedIn = false;
    const network = fakeNetwork(async (call) => {
      if (call.path === '/auth/telegram') {
        signedIn = true;
        return json(200, { user: ME });
      }
      if (call.path === '/auth/refresh') {
        // The server's answer to a refresh that fails clears the browser's cookies.
        await gate.promise;
        return refreshInvalid();
      }
      return signedIn ? json(200, ME) : unauthenticated();
    });
    const { client } = makeClient(network.fetch, '/telegram-login');

    // The account read sent on opening the page, before the sign-in, fails; its refresh is out.
    const read = client.me().catch((error: unknown) => error);
    await until(() => network.count('POST', '/auth/refresh') === 1);
    const signIn = client.loginWithTelegram({ id: 1, auth_date: 1, hash: 'h' } as never);
    await new Promise((resolve) => setImmediate(resolve));
    expect(network.count('POST', '/auth/telegram')).toBe(0);
    gate.resolve();

    await expect(signIn).resolves.toEqual({ user: ME });
    expect(await read).toMatchObject({ status: 401 });
    expect(network.calls.map((call) => `${call.method} ${call.path}`)).toEqual([
      'GET /users/me',
      'POST /auth/refresh',
      'POST /auth/telegram',
    ]);
    await expect(client.me()).resolves.toEqual(ME);
  });
});

describe('errors', () => {
  it('throws a contract error with its code and does not refresh', async () => {
    const network = fakeNetwork(() =>
      problem(409, 'TRIAL_USED', 'the trial was used', { request_id: 'req-1' }),
    );
    const { client, navigate } = makeClient(network.fetch);

    const error = await failure(client.startTrial());

    expect(error).toMatchObject({
      name: 'ApiError',
      status: 409,
      code: 'TRIAL_USED',
      message: 'the trial was used',
      details: [],
      requestId: 'req-1',
    });
    expect(network.calls).toHaveLength(1);
    expect(navigate).not.toHaveBeenCalled();
  });

  it('carries the details of a validation failure', async () => {
    const details = [{ field: 'plan_name', message: 'must be a string' }];
    const network = fakeNetwork(() =>
      problem(400, 'VALIDATION_FAILED', 'request validation failed', { details }),
    );
    const { client } = makeClient(network.fetch);

    const error = await failure(
      client.createInvoice({ plan_name: 'month', currency: 'USD', provider: 'ton' }),
    );

    expect(error).toMatchObject({ status: 400, code: 'VALIDATION_FAILED', details });
  });

  it('turns an answer without the contract body into UNEXPECTED_RESPONSE', async () => {
    const network = fakeNetwork(() => new Response('<html>Bad Gateway</html>', { status: 502 }));
    const { client } = makeClient(network.fetch);

    const error = await failure(client.plans());

    expect(error).toMatchObject({ status: 502, code: 'UNEXPECTED_RESPONSE' });
  });

  it('turns a failed fetch into NETWORK_ERROR with status 0', async () => {
    const network = fakeNetwork(() => {
      throw new TypeError('Failed to fetch');
    });
    const { client } = makeClient(network.fetch);

    const error = await failure(client.plans());

    expect(error).toMatchObject({ status: 0, code: 'NETWORK_ERROR' });
    expect(error.cause).toBeInstanceOf(TypeError);
  });
});

describe('login routes never trigger the refresh', () => {
  const cases: [string, (client: ClientModule.Client) => Promise<unknown>, string][] = [
    ['createSeedAccount', (client) => client.createSeedAccount(), '/auth/seed'],
    ['loginWithSeed', (client) => client.loginWithSeed({ seed: 'a b c' }), '/auth/seed/login'],
    [
      'loginWithTelegram',
      (client) =>
        client.loginWithTelegram({ id: 42, first_name: 'A', auth_date: 1700000000, hash: 'h' }),
      '/auth/telegram',
    ],
    [
      'adminLogin',
      (client) => client.adminLogin({ username: 'owner', password: 'long enough pass' }),
      '/auth/admin/login',
    ],
    [
      'exchangeBootstrap',
      (client) => client.exchangeBootstrap({ bootstrap_token: 't' }),
      '/auth/exchange',
    ],
    ['refresh', (client) => client.refresh(), '/auth/refresh'],
    ['createLoginCode', (client) => client.createLoginCode(), '/auth/bot/login-codes'],
    [
      'pollLoginCode',
      (client) => client.pollLoginCode('c0de', { poll_secret: 's' }),
      '/auth/bot/login-codes/c0de/poll',
    ],
  ];

  it.each(cases)('%s answering 401 rejects at once', async (_name, invoke, path) => {
    const network = fakeNetwork(() => problem(401, 'INVALID_CREDENTIALS', 'wrong credentials'));
    const { client, navigate } = makeClient(network.fetch);

    const error = await failure(invoke(client));

    expect(error).toMatchObject({ status: 401, code: 'INVALID_CREDENTIALS' });
    expect(network.calls.map((call) => `${call.method} ${call.path}`)).toEqual([`POST ${path}`]);
    expect(navigate).not.toHaveBeenCalled();
  });
});

describe('tabs of one browser share one refresh', () => {
  async function twoTabs(storage: StorageLike | null) {
    const { locks, asked } = fakeLocks();
    const gate = deferred();
    // One cookie jar: both tabs talk to the same session.
    const network = expiredSession(gate.promise);
    const tab1 = makeClient(network.fetch, '/account', { locks, storage });
    const tab2 = makeClient(network.fetch, '/plans', { locks, storage });

    const answers = Promise.all([tab1.client.me(), tab2.client.me()]);
    // Tab 1 holds the lock for its refresh; tab 2 found it taken and queued behind it.
    await until(() => asked.length === 3);
    gate.resolve();

    await expect(answers).resolves.toEqual([ME, ME]);
    expect(network.count('POST', '/auth/refresh')).toBe(1);
    expect(asked.every((request) => request.name === REFRESH_LOCK)).toBe(true);
    expect(tab1.navigate).not.toHaveBeenCalled();
    expect(tab2.navigate).not.toHaveBeenCalled();
    return network;
  }

  it('with shared storage, the waiting tab sees the refresh and only retries', async () => {
    const storage = fakeStorage();
    const network = await twoTabs(storage);

    expect(storage.getItem(REFRESH_GENERATION_KEY)).toBe('1');
    // Two 401s and two retries: no probe was needed.
    expect(network.count('GET', '/users/me')).toBe(4);
  });

  it('without storage, the waiting tab probes the session instead of refreshing', async () => {
    const network = await twoTabs(null);

    // Two 401s, the waiting tab's probe, and two retries.
    expect(network.count('GET', '/users/me')).toBe(5);
  });
});

describe('requests', () => {
  it('sends snake_case JSON bodies with their content type', async () => {
    const network = fakeNetwork(() => json(201, { id: 'i' }));
    const { client } = makeClient(network.fetch);

    await client.createInvoice({ plan_name: 'month', currency: 'EUR', provider: 'telegram' });

    const [call] = network.calls;
    expect(call.url).toBe(`${BASE_URL}/api/v1/invoices`);
    expect(call.init.method).toBe('POST');
    expect(call.init.headers['Content-Type']).toBe('application/json');
    expect(JSON.parse(call.init.body ?? '')).toEqual({
      plan_name: 'month',
      currency: 'EUR',
      provider: 'telegram',
    });
  });

  it('sends no body and no content type when the route takes none', async () => {
    const network = fakeNetwork(() => json(200, { plan_name: 'trial' }));
    const { client } = makeClient(network.fetch);

    await client.startTrial();

    expect(network.calls[0].init.body).toBeUndefined();
    expect(network.calls[0].init.headers['Content-Type']).toBeUndefined();
  });

  it('puts paging into the query and escapes path ids', async () => {
    const network = fakeNetwork(() => json(200, { items: [], next_cursor: null }));
    const { client } = makeClient(network.fetch);

    await client.listTickets({ limit: 20, cursor: 'a/b' });
    await client.getInvoice('../admin');

    expect(network.calls[0].url).toBe(`${BASE_URL}/api/v1/tickets?limit=20&cursor=a%2Fb`);
    expect(network.calls[1].url).toBe(`${BASE_URL}/api/v1/invoices/..%2Fadmin`);
  });

  it('answers undefined for 204', async () => {
    const network = fakeNetwork(() => new Response(null, { status: 204 }));
    const { client } = makeClient(network.fetch);

    await expect(client.logout()).resolves.toBeUndefined();
  });
});
