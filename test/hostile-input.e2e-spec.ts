import { randomUUID } from 'node:crypto';
import { MAX_INPUT_DEPTH } from '../src/common/hostile-input';
import { discoverRoutes } from './authz/discover-routes';
import { startTestApp, type TestApp } from './harness/app';
import { newUser, type TestUser } from './harness/factories';

/** `[[[…"x"…]]]` as raw JSON text, `depth` arrays deep. */
const nested = (depth: number): string => '['.repeat(depth) + '"x"' + ']'.repeat(depth);

/** Raw JSON bodies no route can accept; each must be refused with a 4xx, never a 500. */
const BODIES: [label: string, body: string][] = [
  ['5000 levels of arrays', `{"seed":${nested(5000)},"clicks":${nested(5000)}}`],
  [
    'a NUL in a string',
    String.raw`{"username":"ab\u0000c","password":"long enough password","seed":"\u0000","body":"hi\u0000"}`,
  ],
  ['a NUL in a key', String.raw`{"a\u0000b":1}`],
];

describe('hostile input reaches no route as a 500', () => {
  let t: TestApp;
  let owner: TestUser;
  beforeAll(async () => {
    t = await startTestApp();
    owner = await newUser(t, 'owner');
  });
  afterAll(() => t.close());

  it.each(BODIES)('%s, to every mutating route, anonymous and as owner', async (_label, body) => {
    const routes = discoverRoutes(t.app).filter((r) => ['POST', 'PUT', 'PATCH'].includes(r.method));
    expect(routes.length).toBeGreaterThan(10);
    for (const route of routes) {
      const path = route.path.replace(/\{[^}]+\}/g, randomUUID());
      for (const headers of [{}, owner.bearer]) {
        const agent = t.http();
        const send = { POST: agent.post, PUT: agent.put, PATCH: agent.patch }[route.method]!.bind(
          agent,
        );
        const res = await send(path)
          .set(headers)
          .set('Content-Type', 'application/json')
          .send(body);
        expect([route.key, res.status < 500]).toEqual([route.key, true]);
      }
    }
  });

  it('answers 400 VALIDATION_FAILED naming the field, before any rule of the route', async () => {
    const deep = await t
      .http()
      .post('/api/v1/auth/seed/login')
      .set('Content-Type', 'application/json')
      .send(`{"seed":${nested(MAX_INPUT_DEPTH + 5)}}`);
    expect(deep.status).toBe(400);
    expect(deep.body).toMatchObject({
      code: 'VALIDATION_FAILED',
      details: [{ field: expect.stringMatching(/^seed/) }],
    });

    const nul = await t
      .http()
      .post('/api/v1/auth/admin/login')
      .send({ username: 'ab\u0000c', password: 'x' });
    expect(nul.status).toBe(400);
    expect(nul.body.details).toEqual([
      { field: 'username', message: 'must not contain NUL characters' },
    ]);

    const query = await t.http().get('/api/v1/admin/users?q=a%00b').set(owner.bearer);
    expect(query.status).toBe(400);
    expect(query.body.code).toBe('VALIDATION_FAILED');
  });

  it('accepts ordinary nesting and text', async () => {
    await t.http().post('/api/v1/auth/seed/login').send({ seed: 'not-a-real-seed' }).expect(401);
  });
});
