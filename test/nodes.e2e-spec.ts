import { X509Certificate } from 'node:crypto';
import { type AddressInfo, createServer, type Server } from 'node:net';
import { HostResolver } from '../src/common/host-resolver';
import { HealthService } from '../src/nodes/health.service';
import { ProvisioningService } from '../src/nodes/provisioning.service';
import { NodesRepository } from '../src/nodes/nodes.repository';
import { SessionTokens } from '../src/nodes/session-token';
import { startTestApp, type TestApp } from './harness/app';
import { slowedDown } from './harness/slowed';
import { newUser, type TestUser } from './harness/factories';
import { createNode, nodeBody, subscribedUser } from './harness/nodes';

describe('nodes: registry and routing', () => {
  let t: TestApp;
  let owner: TestUser;

  beforeAll(async () => {
    t = await startTestApp();
    owner = await newUser(t, 'owner');
  });
  afterAll(() => t.close());

  /** Puts a node where routing offers it: provisioned and answering health checks. */
  async function makeUsable(id: string): Promise<void> {
    await t.dataSource.query(
      `UPDATE nodes SET status = 'online', provision_state = 'ready' WHERE id = $1`,
      [id],
    );
  }

  it('creates a node with service-made REALITY parameters and never returns a private key', async () => {
    const body = nodeBody({
      name: 'fra-1',
      tunnel_port: 8443,
      admission_port: 9443,
      traffic_multiplier: 2,
    });
    const response = await t.http().post('/api/v1/admin/nodes').set(owner.bearer).send(body);
    expect(response.status).toBe(201);
    const node = response.body as Record<string, unknown>;
    expect(node).toMatchObject({
      name: 'fra-1',
      host: '127.0.0.1',
      ssh_port: 22,
      ssh_user: 'root',
      ssh_host_key_sha256: null,
      tunnel_host: '127.0.0.1',
      tunnel_port: 8443,
      tunnel_protocol: 'vless',
      tunnel_flow: 'xtls-rprx-vision',
      sni_domain: 'www.example.com',
      traffic_multiplier: 2,
      admission_port: 9443,
      status: 'unknown',
      provision_state: 'new',
      last_error: null,
      last_checked_at: null,
      last_report_at: null,
    });
    expect(node.public_key).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(node.tunnel_short_id).toMatch(/^[0-9a-f]{16}$/);
    expect(Object.keys(node).join(',')).not.toMatch(/private|secret|key_enc/);
    expect(JSON.stringify(node)).not.toContain('PRIVATE KEY');

    const [row] = (await t.dataSource.query(
      `SELECT ssh_private_key_enc, reality_private_key_enc, admission_cert_pem, admission_key_enc,
              agent_secret_enc, agent_secret_sha256
         FROM nodes WHERE id = $1`,
      [node.id],
    )) as Record<string, string>[];
    expect(row.ssh_private_key_enc).toMatch(/^v1\.[\w-]{8}\./);
    expect(row.ssh_private_key_enc).not.toContain('PRIVATE KEY');
    expect(row.reality_private_key_enc).toMatch(/^v1\./);
    // The agent's key and the node's secret are sealed too; the certificate is public.
    expect(row.admission_key_enc).toMatch(/^v1\./);
    expect(row.agent_secret_enc).toMatch(/^v1\./);
    expect(row.agent_secret_sha256).toMatch(/^[0-9a-f]{64}$/);
    const cert = new X509Certificate(row.admission_cert_pem);
    expect(cert.subjectAltName).toBe('IP Address:127.0.0.1');
    expect(node.admission_cert_sha256).toBe(cert.fingerprint256.replace(/:/g, '').toLowerCase());

    const again = await t
      .http()
      .get(`/api/v1/admin/nodes/${String(node.id)}`)
      .set(owner.bearer);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(node);
  });

  it('two nodes never share REALITY keys or short ids', async () => {
    const a = await createNode(t, owner);
    const b = await createNode(t, owner);
    expect(a.public_key).not.toBe(b.public_key);
    expect(a.tunnel_short_id).not.toBe(b.tunnel_short_id);
  });

  it('lists nodes in pages of {items, next_cursor}', async () => {
    for (let i = 0; i < 3; i++) await createNode(t, owner);
    const seen = new Set<string>();
    let cursor: string | null = null;
    do {
      const query: Record<string, string | number> = { limit: 2 };
      if (cursor) query.cursor = cursor;
      const page = await t.http().get('/api/v1/admin/nodes').query(query).set(owner.bearer);
      expect(page.status).toBe(200);
      const body = page.body as { items: { id: string }[]; next_cursor: string | null };
      expect(body.items.length).toBeLessThanOrEqual(2);
      for (const item of body.items) seen.add(item.id);
      cursor = body.next_cursor;
    } while (cursor);
    const [{ n }] = (await t.dataSource.query(
      `SELECT count(*)::int AS n FROM nodes WHERE deleted_at IS NULL`,
    )) as { n: number }[];
    expect(seen.size).toBe(n);
  });

  it.each([
    ['a bad host', { host: 'http://evil/' }],
    ['a host with a space', { host: 'a b' }],
    ['a port out of range', { tunnel_port: 70000 }],
    ['an ssh port of 0', { ssh_port: 0 }],
    ['an unknown field', { colour: 'red' }],
    ['no private key', { ssh_private_key: undefined }],
    ['a key that is not one', { ssh_private_key: 'hello' }],
    ['a bad fingerprint', { ssh_host_key_sha256: 'MD5:aa' }],
    ['a multiplier of 20', { traffic_multiplier: 20 }],
    ['an admission port on the tunnel port', { tunnel_port: 8443, admission_port: 8443 }],
    ['the default admission port on the tunnel port', { tunnel_port: 8443 }],
    ['the admission port on the default tunnel port', { admission_port: 443 }],
    ['an admission port out of range', { admission_port: 0 }],
    ['a status', { status: 'online' }],
  ])('refuses a node with %s (400, nothing made)', async (_what, overrides) => {
    const before = await countNodes();
    const response = await t
      .http()
      .post('/api/v1/admin/nodes')
      .set(owner.bearer)
      .send(nodeBody(overrides as Record<string, string>));
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ code: 'VALIDATION_FAILED' });
    expect(await countNodes()).toBe(before);
  });

  it.each([
    ['status', { status: 'online' }],
    ['provision_state', { provision_state: 'ready' }],
    ['public_key', { public_key: 'x'.repeat(43) }],
    ['a bad host', { host: 'not a host' }],
    ['a port out of range', { ssh_port: 65536 }],
    ['a null name', { name: null }],
    ['an unknown field', { nope: 1 }],
    ['a tunnel port on the admission port', { tunnel_port: 8443 }],
    ['an admission port on the tunnel port', { admission_port: 443 }],
    ['both ports the same', { tunnel_port: 7000, admission_port: 7000 }],
    ['an admission certificate', { admission_cert_sha256: 'a'.repeat(64) }],
  ])('a PATCH with %s is 400 and changes nothing', async (_what, patch) => {
    const node = await createNode(t, owner);
    const response = await t
      .http()
      .patch(`/api/v1/admin/nodes/${node.id}`)
      .set(owner.bearer)
      .send({ name: 'changed', ...patch });
    expect(response.status).toBe(400);
    const after = await t.http().get(`/api/v1/admin/nodes/${node.id}`).set(owner.bearer);
    expect(after.body).toEqual(node);
  });

  it('PATCH changes the given fields, keeps the keys, and is audited without secrets', async () => {
    const node = await createNode(t, owner);
    const newKey = nodeBody().ssh_private_key;
    const response = await t
      .http()
      .patch(`/api/v1/admin/nodes/${node.id}`)
      .set(owner.bearer)
      .send({ name: 'renamed', tunnel_port: 9443, admission_port: 443, ssh_private_key: newKey });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      name: 'renamed',
      tunnel_port: 9443,
      admission_port: 443,
      admission_cert_sha256: node.admission_cert_sha256,
      public_key: node.public_key,
    });
    const audit = (await t.dataSource.query(
      `SELECT action, before, after FROM audit_log WHERE target_id = $1 ORDER BY created_at`,
      [node.id],
    )) as { action: string; before: unknown; after: unknown }[];
    expect(audit.map((entry) => entry.action)).toEqual(['node.created', 'node.changed']);
    expect(audit[1].after).toMatchObject({ name: 'renamed', ssh_private_key: 'replaced' });
    expect(JSON.stringify(audit)).not.toContain('PRIVATE KEY');
  });

  it('unknown and malformed node ids', async () => {
    const unknown = '00000000-0000-4000-8000-000000000000';
    for (const call of [
      t.http().get(`/api/v1/admin/nodes/${unknown}`),
      t.http().patch(`/api/v1/admin/nodes/${unknown}`).send({ name: 'x' }),
      t.http().delete(`/api/v1/admin/nodes/${unknown}`),
      t.http().post(`/api/v1/admin/nodes/${unknown}/provision`),
      t.http().post(`/api/v1/admin/nodes/${unknown}/restart`),
    ]) {
      const response = await call.set(owner.bearer);
      expect(response.status).toBe(404);
      expect(response.body).toMatchObject({ code: 'NOT_FOUND' });
    }
    const malformed = await t.http().get('/api/v1/admin/nodes/not-a-uuid').set(owner.bearer);
    expect(malformed.status).toBe(400);
  });

  it('routing: 402 without an active subscription', async () => {
    const user = await newUser(t, 'seed');
    const response = await t.http().get('/api/v1/nodes/routing').set(user.bearer);
    expect(response.status).toBe(402);
    expect(response.body).toMatchObject({ code: 'SUBSCRIPTION_REQUIRED' });
    const lapsed = await newUser(t, 'seed', {
      planName: 'monthly',
      subscriptionExpiresAt: new Date(Date.now() - 1000),
    });
    const late = await t.http().get('/api/v1/nodes/routing').set(lapsed.bearer);
    expect(late.status).toBe(402);
  });

  it('routing: only online, provisioned nodes, each with its own fresh one-time token', async () => {
    const usable = await createNode(t, owner, { name: 'aaa-usable' });
    const offline = await createNode(t, owner, { name: 'aaa-offline' });
    const unprovisioned = await createNode(t, owner, { name: 'aaa-new' });
    await makeUsable(usable.id);
    await t.dataSource.query(`UPDATE nodes SET provision_state = 'ready' WHERE id = $1`, [
      offline.id,
    ]);
    await t.dataSource.query(`UPDATE nodes SET status = 'online' WHERE id = $1`, [
      unprovisioned.id,
    ]);
    const user = await subscribedUser(t);

    const first = await t.http().get('/api/v1/nodes/routing').set(user.bearer);
    expect(first.status).toBe(200);
    expect(first.headers['content-type']).toBe('application/json; charset=utf-8');
    const entries = first.body as Record<string, unknown>[];
    const ids = entries.map((entry) => entry.node_id);
    expect(ids).toContain(usable.id);
    expect(ids).not.toContain(offline.id);
    expect(ids).not.toContain(unprovisioned.id);
    const entry = entries.find((e) => e.node_id === usable.id)!;
    expect(entry).toEqual({
      node_id: usable.id,
      name: 'aaa-usable',
      tunnel_host: usable.tunnel_host,
      tunnel_port: usable.tunnel_port,
      tunnel_protocol: 'vless',
      tunnel_flow: 'xtls-rprx-vision',
      tunnel_short_id: usable.tunnel_short_id,
      public_key: usable.public_key,
      sni_domain: usable.sni_domain,
      session_token: expect.stringMatching(/^vst2\./) as unknown,
      admission_url: `https://127.0.0.1:8443/v1/sessions`,
      admission_cert_sha256: usable.admission_cert_sha256,
    });
    expect(entry.admission_cert_sha256).toMatch(/^[0-9a-f]{64}$/);

    const claims = t.app.get(SessionTokens).verify(entry.session_token as string)!;
    expect(claims).toMatchObject({ userId: user.user.id, nodeId: usable.id });
    const ttl = claims.expiresAt - Date.now() / 1000;
    expect(ttl).toBeGreaterThan(t.settings.sessionTokenTtlS - 5);
    expect(ttl).toBeLessThanOrEqual(t.settings.sessionTokenTtlS);

    const second = await t.http().get('/api/v1/nodes/routing').set(user.bearer);
    const again = (second.body as Record<string, unknown>[]).find((e) => e.node_id === usable.id)!;
    expect(again.session_token).not.toBe(entry.session_token);
    // An access JWT is never mistaken for a session token, nor the other way round.
    expect(t.app.get(SessionTokens).verify(user.session.accessToken)).toBeNull();
  });

  it('routing requests at once share reads, and each caller gets its own answer and tokens', async () => {
    await makeUsable((await createNode(t, owner)).id);
    const subscribers = await Promise.all(Array.from({ length: 6 }, () => subscribedUser(t)));
    const unsubscribed = await newUser(t, 'seed');
    const callers = [...subscribers, unsubscribed, ...subscribers, unsubscribed];
    const reads = slowedDown(t.app.get(NodesRepository), 'routingNodes');
    try {
      const answers = await Promise.all(
        callers.map((caller) => t.http().get('/api/v1/nodes/routing').set(caller.bearer)),
      );
      expect(answers.map((answer) => answer.status)).toEqual(
        callers.map((caller) => (caller === unsubscribed ? 402 : 200)),
      );
      const tokens = t.app.get(SessionTokens);
      answers.forEach((answer, i) => {
        if (answer.status !== 200) return;
        const entries = answer.body as { session_token: string }[];
        expect(entries.length).toBeGreaterThan(0);
        for (const entry of entries) {
          expect(tokens.verify(entry.session_token)?.userId).toBe(callers[i].user.id);
        }
      });
      expect(reads.mock.calls.length).toBeLessThan(callers.length);
    } finally {
      reads.mockRestore();
    }
  });

  it('a routing request reads no counter of its own while its node list is current', async () => {
    // The routing counter comes with the caller's session, read after the request arrived.
    await makeUsable((await createNode(t, owner)).id);
    const user = await subscribedUser(t);
    await t.http().get('/api/v1/nodes/routing').set(user.bearer).expect(200);
    const counter = jest.spyOn(t.app.get(NodesRepository), 'routingVersion');
    try {
      const again = await t.http().get('/api/v1/nodes/routing').set(user.bearer).expect(200);
      expect((again.body as unknown[]).length).toBeGreaterThan(0);
      expect(counter).not.toHaveBeenCalled();
    } finally {
      counter.mockRestore();
    }
  });

  it('issuing tokens for many nodes writes no rows', async () => {
    for (let i = 0; i < 5; i++) await makeUsable((await createNode(t, owner)).id);
    const user = await subscribedUser(t);
    const before = await countAllRows();
    const response = await t.http().get('/api/v1/nodes/routing').set(user.bearer);
    expect((response.body as unknown[]).length).toBeGreaterThanOrEqual(5);
    expect(await countAllRows()).toBe(before);
  });

  it('deleting a node takes it out of routing at once, and it is gone for staff', async () => {
    const node = await createNode(t, owner);
    await makeUsable(node.id);
    const user = await subscribedUser(t);
    const listed = async (): Promise<boolean> => {
      const response = await t.http().get('/api/v1/nodes/routing').set(user.bearer);
      return (response.body as { node_id: string }[]).some((e) => e.node_id === node.id);
    };
    expect(await listed()).toBe(true);
    await t.http().delete(`/api/v1/admin/nodes/${node.id}`).set(owner.bearer).expect(204);
    expect(await listed()).toBe(false);
    await t.http().get(`/api/v1/admin/nodes/${node.id}`).set(owner.bearer).expect(404);
    await t.http().delete(`/api/v1/admin/nodes/${node.id}`).set(owner.bearer).expect(404);
    const actions = (await t.dataSource.query(
      `SELECT action FROM audit_log WHERE target_id = $1 ORDER BY created_at`,
      [node.id],
    )) as { action: string }[];
    expect(actions.map((a) => a.action)).toEqual(['node.created', 'node.deleted']);
  });

  /** Rows in every table of the service. */
  async function countAllRows(): Promise<number> {
    const [{ n }] = (await t.dataSource.query(
      `SELECT sum((xpath('/row/n/text()', query_to_xml(
         format('SELECT count(*) AS n FROM %I', tablename), false, true, '')))[1]::text::int)::int AS n
         FROM pg_tables WHERE schemaname = 'public'`,
    )) as { n: number }[];
    return n;
  }

  async function countNodes(): Promise<number> {
    const [{ n }] = (await t.dataSource.query(`SELECT count(*)::int AS n FROM nodes`)) as {
      n: number;
    }[];
    return n;
  }
});

describe('nodes: hosts that point inward', () => {
  let t: TestApp;
  let owner: TestUser;

  beforeAll(async () => {
    t = await startTestApp({ NODE_PRIVATE_HOSTS_ALLOWED: 'false', NODE_HEALTH_INTERVAL_S: '2' });
    owner = await newUser(t, 'owner');
  });
  afterAll(() => t.close());

  const countNodes = async () =>
    ((await t.dataSource.query(`SELECT count(*)::int AS n FROM nodes`)) as { n: number }[])[0].n;

  it('refuses loopback, link-local, private, multicast, broadcast and unspecified hosts, also by name or through NAT64 and 6to4, and makes nothing', async () => {
    const before = await countNodes();
    for (const host of [
      '127.0.0.1',
      '10.0.0.5',
      '172.20.1.1',
      '192.168.1.1',
      '169.254.169.254',
      '0.0.0.0',
      '::1',
      'fe80::1',
      '::ffff:127.0.0.1',
      'localhost',
      'foo.localhost',
      'metadata.google.internal',
      'metadata',
      '64:ff9b::127.0.0.1', // loopback through NAT64
      '64:ff9b::a9fe:a9fe', // cloud metadata through NAT64
      '2002:7f00:1::1', // loopback through 6to4
      '224.0.0.1',
      'ff02::1',
      '255.255.255.255',
    ]) {
      const response = await t
        .http()
        .post('/api/v1/admin/nodes')
        .set(owner.bearer)
        .send(nodeBody({ host }));
      expect([
        host,
        response.status,
        response.body.code,
        response.body.details?.[0]?.field,
      ]).toEqual([host, 400, 'VALIDATION_FAILED', 'host']);
    }
    expect(await countNodes()).toBe(before);
  });

  it('accepts a public address; a PATCH to an inward one is refused and changes nothing', async () => {
    const node = await createNode(t, owner, { host: '203.0.113.10' });
    expect(node.host).toBe('203.0.113.10');
    const response = await t
      .http()
      .patch(`/api/v1/admin/nodes/${node.id}`)
      .set(owner.bearer)
      .send({ host: '169.254.169.254' });
    expect(response.status).toBe(400);
    expect(response.body.details).toEqual([
      { field: 'host', message: expect.stringContaining('NODE_PRIVATE_HOSTS_ALLOWED') },
    ]);
    const [row] = await t.dataSource.query(`SELECT host FROM nodes WHERE id = $1`, [node.id]);
    expect(row.host).toBe('203.0.113.10');
  });

  it('a name that points inward after it was saved is neither probed nor reached over SSH', async () => {
    // A hosts table instead of DNS: the name is public when saved, then rebinds to loopback.
    const table = new Map<string, string[]>([['rebind.example.test', ['203.0.113.20']]]);
    const resolver = t.app.get(HostResolver);
    const system = resolver.lookupAll;
    resolver.lookupAll = (host) => Promise.resolve(table.get(host) ?? []);
    const accepted: string[] = [];
    const listen = async (what: string): Promise<{ port: number; server: Server }> => {
      const server = createServer((socket) => {
        accepted.push(what);
        socket.destroy();
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      return { port: (server.address() as AddressInfo).port, server };
    };
    const [tunnel, ssh] = [await listen('tunnel'), await listen('ssh')];
    try {
      const node = await createNode(t, owner, {
        host: 'rebind.example.test',
        tunnel_port: tunnel.port,
        ssh_port: ssh.port,
      });
      table.set('rebind.example.test', ['203.0.113.20', '127.0.0.1']);
      // A name changed behind the service's back, as a DNS answer may be.
      const other = await createNode(t, owner, { host: '203.0.113.21', tunnel_port: tunnel.port });
      await t.dataSource.query(`UPDATE nodes SET host = 'localhost' WHERE id = $1`, [other.id]);
      await t.dataSource.query(
        `UPDATE nodes SET provision_state = 'ready' WHERE id = ANY($1::uuid[])`,
        [[node.id, other.id]],
      );

      await t.app.get(HealthService).checkAll();
      await t.http().post(`/api/v1/admin/nodes/${node.id}/restart`).set(owner.bearer).expect(202);
      await t.app.get(ProvisioningService).idle();

      expect(accepted).toEqual([]);
      const rows = (await t.dataSource.query(
        `SELECT id, status, last_error FROM nodes WHERE id = ANY($1::uuid[])`,
        [[node.id, other.id]],
      )) as { id: string; status: string; last_error: string | null }[];
      const byId = new Map(rows.map((row) => [row.id, row]));
      expect(byId.get(node.id)?.status).toBe('offline');
      expect(byId.get(other.id)?.status).toBe('offline');
      expect(byId.get(node.id)?.last_error).toMatch(
        /^restart: not connected: the host rebind\.example\.test resolves to 127\.0\.0\.1/,
      );
    } finally {
      resolver.lookupAll = system;
      await Promise.all(
        [tunnel, ssh].map(
          ({ server }) => new Promise<void>((resolve) => server.close(() => resolve())),
        ),
      );
    }
  });
});
