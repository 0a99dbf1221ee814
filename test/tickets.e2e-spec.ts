import { startTestApp, type TestApp } from './harness/app';
import { newUser, type TestUser } from './harness/factories';

const API = '/api/v1';
const MISSING_ID = '00000000-0000-4000-8000-000000000000';

interface TicketJson {
  id: string;
  user_id: string;
  status: string;
  created_at: string;
  closed_at: string | null;
  last_message_at: string;
  awaiting_staff: boolean;
}

async function count(t: TestApp, sql: string, params: unknown[] = []): Promise<number> {
  const rows = (await t.dataSource.query(sql, params)) as { n: string }[];
  return Number(rows[0].n);
}

const ticketCount = (t: TestApp): Promise<number> => count(t, 'SELECT count(*) AS n FROM tickets');
const messageCount = (t: TestApp): Promise<number> =>
  count(t, 'SELECT count(*) AS n FROM ticket_messages');

/** A call with a JSON body for POSTs (`{ body: 'x' }` unless given), authenticated when `who` is. */
function call(
  t: TestApp,
  method: 'get' | 'post',
  path: string,
  who?: TestUser,
  // Closing takes no body; a body there is refused before the ticket is looked up.
  body: object = path.endsWith('/close') ? {} : { body: 'x' },
) {
  const agent = t.http();
  const req = method === 'get' ? agent.get(`${API}${path}`) : agent.post(`${API}${path}`);
  if (who) req.set(who.bearer);
  return method === 'post' ? req.send(body) : req;
}

async function openTicket(
  t: TestApp,
  u: TestUser,
  subject = 'Cannot connect',
): Promise<TicketJson> {
  const res = await t
    .http()
    .post(`${API}/tickets`)
    .set(u.bearer)
    .send({ subject, message: 'It stopped working today.' })
    .expect(201);
  return res.body.ticket as TicketJson;
}

async function close(t: TestApp, staff: TestUser, id: string): Promise<TicketJson> {
  const res = await t.http().post(`${API}/admin/tickets/${id}/close`).set(staff.bearer).expect(200);
  return res.body as TicketJson;
}

describe('support tickets', () => {
  let t: TestApp;
  let support: TestUser;
  beforeAll(async () => {
    t = await startTestApp();
    support = await newUser(t, 'support');
  });
  afterAll(() => t.close());

  it('full thread: open, staff reply, user answer, close, then no more posts', async () => {
    const user = await newUser(t, 'seed');
    const created = await t
      .http()
      .post(`${API}/tickets`)
      .set(user.cookieHeaders)
      .send({ subject: 'VPN is slow', message: 'Since yesterday.' })
      .expect(201);
    const ticket = created.body.ticket as TicketJson;
    expect(created.body.ticket).toMatchObject({
      user_id: user.user.id,
      subject: 'VPN is slow',
      status: 'open',
      closed_at: null,
      awaiting_staff: true,
    });
    expect(created.body.messages).toEqual([
      {
        id: expect.any(String),
        ticket_id: ticket.id,
        author_id: user.user.id,
        author_role: 'user',
        body: 'Since yesterday.',
        created_at: ticket.created_at,
      },
    ]);
    expect(ticket.last_message_at).toBe(ticket.created_at);

    const seen = await t
      .http()
      .get(`${API}/admin/tickets/${ticket.id}`)
      .set(support.bearer)
      .expect(200);
    expect(seen.body.ticket.id).toBe(ticket.id);
    expect(seen.body.messages).toHaveLength(1);

    const staffReply = await t
      .http()
      .post(`${API}/admin/tickets/${ticket.id}/messages`)
      .set(support.cookieHeaders)
      .send({ body: 'Which server do you use?' })
      .expect(201);
    expect(staffReply.body).toMatchObject({
      ticket_id: ticket.id,
      author_id: support.user.id,
      author_role: 'staff',
      body: 'Which server do you use?',
    });

    const afterStaff = await t.http().get(`${API}/tickets/${ticket.id}`).set(user.bearer);
    expect(afterStaff.status).toBe(200);
    expect(afterStaff.body.ticket.awaiting_staff).toBe(false);
    expect(afterStaff.body.ticket.last_message_at).toBe(staffReply.body.created_at);

    const userReply = await t
      .http()
      .post(`${API}/tickets/${ticket.id}/messages`)
      .set(user.bearer)
      .send({ body: 'The Frankfurt one.' })
      .expect(201);
    expect(userReply.body).toMatchObject({ author_id: user.user.id, author_role: 'user' });

    const thread = await t.http().get(`${API}/tickets/${ticket.id}`).set(user.bearer).expect(200);
    expect(thread.body.ticket.awaiting_staff).toBe(true);
    expect(thread.body.messages.map((m: { body: string }) => m.body)).toEqual([
      'Since yesterday.',
      'Which server do you use?',
      'The Frankfurt one.',
    ]);

    const closed = await close(t, support, ticket.id);
    expect(closed).toMatchObject({ id: ticket.id, status: 'closed', awaiting_staff: false });
    expect(closed.closed_at).not.toBeNull();
    const [row] = (await t.dataSource.query('SELECT closed_by FROM tickets WHERE id = $1', [
      ticket.id,
    ])) as { closed_by: string }[];
    expect(row.closed_by).toBe(support.user.id);

    // Closing again is idempotent: 200 and the ticket as it was.
    expect(await close(t, support, ticket.id)).toEqual(closed);

    const before = await messageCount(t);
    const refused = await t
      .http()
      .post(`${API}/tickets/${ticket.id}/messages`)
      .set(user.bearer)
      .send({ body: 'Hello?' });
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ statusCode: 409, code: 'TICKET_CLOSED' });
    await t
      .http()
      .post(`${API}/admin/tickets/${ticket.id}/messages`)
      .set(support.bearer)
      .send({ body: 'Late answer' })
      .expect(409)
      .expect((res) => expect(res.body.code).toBe('TICKET_CLOSED'));
    expect(await messageCount(t)).toBe(before);
  });

  it("another user's ticket is 404 NO_TICKETS and nothing is written", async () => {
    const owner = await newUser(t, 'telegram');
    const other = await newUser(t, 'seed');
    const ticket = await openTicket(t, owner);
    const before = await messageCount(t);

    const read = await t.http().get(`${API}/tickets/${ticket.id}`).set(other.bearer);
    expect(read.status).toBe(404);
    expect(read.body).toMatchObject({ statusCode: 404, code: 'NO_TICKETS' });
    await t
      .http()
      .post(`${API}/tickets/${ticket.id}/messages`)
      .set(other.bearer)
      .send({ body: 'let me in' })
      .expect(404)
      .expect((res) => expect(res.body.code).toBe('NO_TICKETS'));
    await t
      .http()
      .get(`${API}/tickets`)
      .set(other.bearer)
      .expect(200, { items: [], next_cursor: null });
    expect(await messageCount(t)).toBe(before);

    // A ticket that does not exist answers the same, for users and staff.
    for (const [method, path, who] of [
      ['get', `/tickets/${MISSING_ID}`, other],
      ['get', `/admin/tickets/${MISSING_ID}`, support],
      ['post', `/admin/tickets/${MISSING_ID}/messages`, support],
      ['post', `/admin/tickets/${MISSING_ID}/close`, support],
    ] as const) {
      const res = await call(t, method, path, who);
      expect([path, res.status, res.body.code]).toEqual([path, 404, 'NO_TICKETS']);
    }
    expect(await messageCount(t)).toBe(before);
  });

  it('staff routes: 403 for partner and plain user, 401 anonymous', async () => {
    const owner = await newUser(t, 'seed');
    const ticket = await openTicket(t, owner);
    const routes = [
      ['get', '/admin/tickets'],
      ['get', `/admin/tickets/${ticket.id}`],
      ['post', `/admin/tickets/${ticket.id}/messages`],
      ['post', `/admin/tickets/${ticket.id}/close`],
    ] as const;
    const partner = await newUser(t, 'partner');
    const before = await messageCount(t);
    for (const [method, path] of routes) {
      for (const caller of [partner, owner]) {
        const res = await call(t, method, path, caller);
        expect([path, res.status, res.body.code]).toEqual([path, 403, 'FORBIDDEN']);
      }
      const anonymous = await call(t, method, path);
      expect([path, anonymous.status, anonymous.body.code]).toEqual([path, 401, 'UNAUTHENTICATED']);
    }
    await t.http().get(`${API}/tickets`).expect(401);
    await t.http().post(`${API}/tickets`).send({ subject: 's', message: 'm' }).expect(401);
    expect(await messageCount(t)).toBe(before);
    expect(
      (await t.dataSource.query('SELECT status FROM tickets WHERE id = $1', [ticket.id]))[0],
    ).toEqual({ status: 'open' });

    // owner and moderator handle tickets too.
    for (const kind of ['owner', 'moderator'] as const) {
      const staff = await newUser(t, kind);
      await t.http().get(`${API}/admin/tickets/${ticket.id}`).set(staff.bearer).expect(200);
    }
  });

  it('bad input is 400 VALIDATION_FAILED and writes nothing', async () => {
    const user = await newUser(t, 'seed');
    const ticket = await openTicket(t, user);
    const [tickets, messages] = [await ticketCount(t), await messageCount(t)];
    const badTimestamp = Buffer.from(`2024-13-01T00:00:00.000000Z|${MISSING_ID}`).toString(
      'base64url',
    );
    const badId = Buffer.from('2024-01-01T00:00:00.000000Z|nope').toString('base64url');

    const cases: ['get' | 'post', string, object?][] = [
      ['post', '/tickets', {}],
      ['post', '/tickets', { subject: '', message: 'x' }],
      ['post', '/tickets', { subject: 'x'.repeat(201), message: 'x' }],
      ['post', '/tickets', { subject: 's', message: 'x'.repeat(4001) }],
      ['post', '/tickets', { subject: 's', message: '' }],
      ['post', '/tickets', { subject: 5, message: 'x' }],
      ['post', '/tickets', { subject: 's', message: ['x'] }],
      ['post', '/tickets', { subject: 's', message: 'x', status: 'closed' }],
      ['post', '/tickets', { subject: '   ', message: 'x' }],
      ['post', '/tickets', { subject: 's', message: 'a\u0000b' }],
      // Direction overrides and invisible characters: text that reads otherwise than it is.
      ['post', '/tickets', { subject: 'Refund \u202Egnp.exe', message: 'x' }],
      ['post', '/tickets', { subject: '\u200B', message: 'x' }],
      ['post', '/tickets', { subject: 's', message: '\u200B\u200C\u2060' }],
      ['post', '/tickets', { subject: 's', message: 'send to \u2066acct-1\u2069 please' }],
      ['post', `/tickets/${ticket.id}/messages`, { body: '\u202Edrawkcab' }],
      ['post', `/tickets/${ticket.id}/messages`, { body: '\uFEFF' }],
      ['post', `/admin/tickets/${ticket.id}/messages`, { body: 'fixed\u200F\u202B' }],
      // Fillers that draw nothing, mark floods, control characters, unpaired surrogates.
      ['post', '/tickets', { subject: '\u3164', message: 'x' }],
      ['post', '/tickets', { subject: 's', message: '\u3164\u3164' }],
      ['post', '/tickets', { subject: 's', message: 'hi \u115F\u1160 there' }],
      ['post', '/tickets', { subject: 's', message: '\uFFA0' }],
      ['post', '/tickets', { subject: `H${'\u0336'.repeat(12)}elp`, message: 'x' }],
      ['post', '/tickets', { subject: 's', message: `z${'\u0301\u0300\u0302'.repeat(3)}` }],
      ['post', '/tickets', { subject: 'two\nlines', message: 'x' }],
      ['post', '/tickets', { subject: 's', message: 'ring \u0007 ring' }],
      ['post', '/tickets', { subject: 's', message: 'colour \u001b[31m' }],
      ['post', '/tickets', { subject: 'a\ud800b', message: 'x' }],
      ['post', `/tickets/${ticket.id}/messages`, { body: '\udc00' }],
      ['post', `/admin/tickets/${ticket.id}/messages`, { body: 'ok \ud83d' }],
      ['post', `/tickets/${ticket.id}/messages`, { body: '' }],
      ['post', `/tickets/${ticket.id}/messages`, { body: 'x'.repeat(4001) }],
      ['post', `/tickets/${ticket.id}/messages`, { body: 42 }],
      ['post', `/tickets/${ticket.id}/messages`, { body: 'x', author_role: 'staff' }],
      ['post', `/tickets/${ticket.id}/messages`, {}],
      ['post', `/admin/tickets/${ticket.id}/messages`, { body: '' }],
      ['post', `/admin/tickets/${ticket.id}/messages`, { body: 'x'.repeat(4001) }],
      ['post', '/tickets/not-a-uuid/messages', { body: 'x' }],
      // The path's id is throttled on before it is checked: a NUL byte must not reach the database.
      ['post', '/tickets/%00/messages', { body: 'x' }],
      ['post', `/tickets/%00${ticket.id}/messages`, { body: 'x' }],
      ['get', '/tickets/123'],
      ['get', '/admin/tickets/not-a-uuid'],
      ['post', '/admin/tickets/not-a-uuid/messages', { body: 'x' }],
      ['post', '/admin/tickets/not-a-uuid/close'],
      ['get', '/admin/tickets?status=pending'],
      ['get', '/admin/tickets?limit=0'],
      ['get', '/admin/tickets?limit=101'],
      ['get', '/admin/tickets?limit=abc'],
      ['get', '/admin/tickets?limit=1.5'],
      ['get', '/admin/tickets?cursor=%21%21%21'],
      ['get', `/admin/tickets?cursor=${badTimestamp}`],
      ['get', `/admin/tickets?cursor=${badId}`],
      ['get', '/admin/tickets?unknown=1'],
      ['get', '/tickets?limit=-1'],
      ['get', '/tickets?cursor=bm90LWEtY3Vyc29y'],
      ['get', `/tickets?cursor=${'A'.repeat(201)}`],
    ];
    for (const [method, path, body] of cases) {
      const caller = path.startsWith('/admin') ? support : user;
      const res = await call(t, method, path, caller, body);
      expect([path, body, res.status, res.body.code]).toEqual([
        path,
        body,
        400,
        'VALIDATION_FAILED',
      ]);
    }
    expect([await ticketCount(t), await messageCount(t)]).toEqual([tickets, messages]);

    // The bounds themselves are accepted.
    await t
      .http()
      .post(`${API}/tickets`)
      .set(user.bearer)
      .send({ subject: 's'.repeat(200), message: 'm'.repeat(4000) })
      .expect(201);
    await t
      .http()
      .post(`${API}/tickets/${ticket.id}/messages`)
      .set(user.bearer)
      .send({ body: 'b' })
      .expect(201);
    // Persian writes a zero-width non-joiner inside words, and emoji sequences use the joiner.
    const persian = 'نمی\u200Cتوانم وصل شوم 👩\u200D💻';
    const posted = await t
      .http()
      .post(`${API}/tickets/${ticket.id}/messages`)
      .set(user.bearer)
      .send({ body: persian })
      .expect(201);
    expect(posted.body.body).toBe(persian);
    // A message keeps its lines and tabs.
    const lines = 'Steps:\n\t1. open the app\r\n\t2. tap Connect';
    await t
      .http()
      .post(`${API}/tickets/${ticket.id}/messages`)
      .set(user.bearer)
      .send({ body: lines })
      .expect(201);
  });

  it('at most 5 open tickets; closing one frees a slot', async () => {
    const user = await newUser(t, 'seed');
    const ids: string[] = [];
    for (let i = 0; i < 5; i += 1) ids.push((await openTicket(t, user, `issue ${i}`)).id);
    const before = await ticketCount(t);
    const sixth = await t
      .http()
      .post(`${API}/tickets`)
      .set(user.bearer)
      .send({ subject: 'one more', message: 'x' });
    expect(sixth.status).toBe(409);
    expect(sixth.body.code).toBe('CONFLICT');
    expect(await ticketCount(t)).toBe(before);

    await close(t, support, ids[0]);
    await openTicket(t, user, 'one more');
  });

  it('10 concurrent creations by one user: exactly 5 succeed', async () => {
    const user = await newUser(t, 'seed');
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        t
          .http()
          .post(`${API}/tickets`)
          .set(user.bearer)
          .send({ subject: `race ${i}`, message: 'x' }),
      ),
    );
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([201, 201, 201, 201, 201, 409, 409, 409, 409, 409]);
    expect(results.filter((r) => r.status === 409).every((r) => r.body.code === 'CONFLICT')).toBe(
      true,
    );
    const where = 'FROM tickets WHERE user_id = $1';
    expect(await count(t, `SELECT count(*) AS n ${where}`, [user.user.id])).toBe(5);
    expect(
      await count(
        t,
        `SELECT count(*) AS n FROM ticket_messages WHERE ticket_id IN (SELECT id ${where})`,
        [user.user.id],
      ),
    ).toBe(5);
  });

  it('a post racing a close never lands after the close', async () => {
    const user = await newUser(t, 'seed');
    const tickets = [];
    for (let i = 0; i < 5; i += 1) tickets.push(await openTicket(t, user, `race ${i}`));
    const outcomes = await Promise.all(
      tickets.flatMap((ticket) => [
        ...[1, 2, 3].map(() =>
          t
            .http()
            .post(`${API}/tickets/${ticket.id}/messages`)
            .set(user.bearer)
            .send({ body: 'still there?' }),
        ),
        t.http().post(`${API}/admin/tickets/${ticket.id}/close`).set(support.bearer),
      ]),
    );
    const posted = outcomes.filter((r) => r.status === 201).length;
    const refused = outcomes.filter((r) => r.status === 409 && r.body.code === 'TICKET_CLOSED');
    expect(posted + refused.length).toBe(15);
    const ids = tickets.map((x) => x.id);
    // Every message is older than its ticket's close, and only the accepted ones exist.
    expect(
      await count(
        t,
        `SELECT count(*) AS n FROM ticket_messages m JOIN tickets t ON t.id = m.ticket_id
         WHERE t.id = ANY($1) AND m.created_at > t.closed_at`,
        [ids],
      ),
    ).toBe(0);
    expect(
      await count(t, 'SELECT count(*) AS n FROM ticket_messages WHERE ticket_id = ANY($1)', [ids]),
    ).toBe(5 + posted);
  });
});

describe('support tickets: the staff queue and paging', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  async function page(caller: TestUser, path: string): Promise<[string[], string | null]> {
    const res = await t.http().get(`${API}${path}`).set(caller.bearer).expect(200);
    return [res.body.items.map((x: TicketJson) => x.id), res.body.next_cursor];
  }

  it('open oldest first, closed newest first, awaiting_staff, and cursors', async () => {
    const staff = await newUser(t, 'moderator');
    const a = await newUser(t, 'seed');
    const b = await newUser(t, 'telegram');
    const tk: TicketJson[] = [];
    for (const u of [a, b, a, b, a, b, a]) tk.push(await openTicket(t, u));
    const [t1, t2, t3, t4, t5, t6, t7] = tk.map((x) => x.id);

    await t
      .http()
      .post(`${API}/admin/tickets/${t2}/messages`)
      .set(staff.bearer)
      .send({ body: 'on it' })
      .expect(201);
    for (const id of [t3, t1, t5]) await close(t, staff, id);

    // Open queue, oldest first, across pages.
    const [first, cursor] = await page(staff, '/admin/tickets?limit=3');
    expect(first).toEqual([t2, t4, t6]);
    expect(cursor).toEqual(expect.any(String));
    expect(await page(staff, `/admin/tickets?limit=3&cursor=${cursor}`)).toEqual([[t7], null]);
    expect(await page(staff, '/admin/tickets?status=open')).toEqual([[t2, t4, t6, t7], null]);

    const queue = await t.http().get(`${API}/admin/tickets`).set(staff.bearer).expect(200);
    const awaiting = Object.fromEntries(
      queue.body.items.map((x: TicketJson) => [x.id, x.awaiting_staff]),
    );
    expect(awaiting).toEqual({ [t2]: false, [t4]: true, [t6]: true, [t7]: true });
    const staffLast = queue.body.items.find((x: TicketJson) => x.id === t2) as TicketJson;
    expect(staffLast.last_message_at > staffLast.created_at).toBe(true);

    // A cursor stays valid while new tickets arrive; they join the end of the queue.
    const t8 = (await openTicket(t, b)).id;
    expect(await page(staff, `/admin/tickets?limit=3&cursor=${cursor}`)).toEqual([[t7, t8], null]);

    // Closed, most recently closed first.
    const [closedFirst, closedCursor] = await page(staff, '/admin/tickets?status=closed&limit=2');
    expect(closedFirst).toEqual([t5, t1]);
    expect(
      await page(staff, `/admin/tickets?status=closed&limit=2&cursor=${closedCursor}`),
    ).toEqual([[t3], null]);
    const closedItems = await t
      .http()
      .get(`${API}/admin/tickets?status=closed`)
      .set(staff.bearer)
      .expect(200);
    expect(closedItems.body.items.every((x: TicketJson) => !x.awaiting_staff)).toBe(true);

    // One account's tickets in the queue (a user's page in the console), paged like the rest.
    expect(await page(staff, `/admin/tickets?user_id=${a.user.id}`)).toEqual([[t7], null]);
    const [bFirst, bCursor] = await page(staff, `/admin/tickets?user_id=${b.user.id}&limit=3`);
    expect(bFirst).toEqual([t2, t4, t6]);
    expect(await page(staff, `/admin/tickets?user_id=${b.user.id}&cursor=${bCursor}`)).toEqual([
      [t8],
      null,
    ]);
    expect(await page(staff, `/admin/tickets?user_id=${b.user.id}`)).toEqual([
      [t2, t4, t6, t8],
      null,
    ]);
    expect(await page(staff, `/admin/tickets?status=closed&user_id=${a.user.id}`)).toEqual([
      [t5, t1, t3],
      null,
    ]);
    const badUser = await t
      .http()
      .get(`${API}/admin/tickets?user_id=not-a-uuid`)
      .set(staff.bearer)
      .expect(400);
    expect(badUser.body.code).toBe('VALIDATION_FAILED');

    // A user's own list: newest first, only theirs, paged one at a time.
    const seen: string[] = [];
    let next: string | null = null;
    do {
      const [ids, after]: [string[], string | null] = await page(
        a,
        `/tickets?limit=1${next ? `&cursor=${next}` : ''}`,
      );
      seen.push(...ids);
      next = after;
    } while (next);
    expect(seen).toEqual([t7, t5, t3, t1]);
    expect(await page(b, '/tickets')).toEqual([[t8, t6, t4, t2], null]);
  });

  it('the OpenAPI document describes the ticket routes', async () => {
    const doc = await t.http().get(`${API}/docs-json`).expect(200);
    const paths = doc.body.paths as Record<string, Record<string, unknown>>;
    expect(Object.keys(paths['/api/v1/tickets'] ?? {}).sort()).toEqual(['get', 'post']);
    expect(Object.keys(paths['/api/v1/admin/tickets/{id}/close'] ?? {})).toEqual(['post']);
    const ticket = doc.body.components.schemas.TicketResponse.properties;
    expect(Object.keys(ticket).sort()).toEqual(
      [
        'awaiting_staff',
        'closed_at',
        'created_at',
        'id',
        'last_message_at',
        'status',
        'subject',
        'updated_at',
        'user_id',
      ].sort(),
    );
  });

  it('a thread shows its latest 200 messages, oldest first, however long it grows', async () => {
    const owner = await newUser(t, 'seed');
    const ticket = await openTicket(t, owner);
    await t.dataSource.query(
      `INSERT INTO ticket_messages (ticket_id, author_id, author_role, body, created_at)
       SELECT $1, $2, 'user', 'message ' || i, now() + i * interval '1 second'
         FROM generate_series(1, 300) i`,
      [ticket.id, owner.user.id],
    );
    const res = await t.http().get(`${API}/tickets/${ticket.id}`).set(owner.bearer).expect(200);
    const bodies = (res.body.messages as { body: string }[]).map((m) => m.body);
    expect(bodies).toHaveLength(200);
    expect(bodies[0]).toBe('message 101');
    expect(bodies[199]).toBe('message 300');
  });
});
