/**
 * The subscription link as client apps fetch it: the format each app reads, chosen by its
 * User-Agent; one entry per node of the user's share with the device's own VLESS id; the headers
 * apps show, with the numbers `GET /users/me` shows; devices per HWID or app up to the limit; an
 * entry that says why when there is nothing to connect to; rotation. (That the token is never
 * logged is in refusals.e2e-spec.ts, which reads the log of the service as operators run it.)
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { startTestApp, type TestApp } from './harness/app';
import { newUser, savePlan, type TestUser } from './harness/factories';
import { createNode, subscribedUser } from './harness/nodes';

const SHARE = 2;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

interface RoutedNode {
  id: string;
  name: string;
  host: string;
  tunnel_port: number;
  public_key: string;
  tunnel_short_id: string;
  sni_domain: string;
  tunnel_flow: string;
}

describe('the subscription link: what client apps import', () => {
  let t: TestApp;
  let owner: TestUser;
  let webDir: string;

  beforeAll(async () => {
    webDir = mkdtempSync(join(tmpdir(), 'sub-page-'));
    mkdirSync(join(webDir, 'assets'));
    writeFileSync(join(webDir, 'index.html'), '<!doctype html><title>app</title>');
    t = await startTestApp({
      ROUTING_NODES_MAX: String(SHARE),
      WEB_DIR: webDir,
      APP_URL: 'https://vpn.example.test',
    });
    owner = await newUser(t, 'owner');
    await savePlan(t, owner);
    for (let i = 0; i < 4; i++)
      await createNode(t, owner, { name: `Node ${i}`, host: `10.0.0.${i + 1}` });
    await t.dataSource.query(
      `UPDATE nodes SET status = 'online', provision_state = 'ready', tunnel_flow = 'xtls-rprx-vision'`,
    );
  });
  afterAll(async () => {
    await t.close();
    rmSync(webDir, { recursive: true, force: true });
  });

  async function linkOf(user: TestUser): Promise<{ url: string; path: string }> {
    const response = await t.http().get('/api/v1/users/me/devices').set(user.bearer).expect(200);
    const url = response.body.subscription_url as string;
    return { url, path: new URL(url).pathname };
  }

  async function shareOf(user: TestUser): Promise<RoutedNode[]> {
    const routing = await t.http().get('/api/v1/nodes/routing').set(user.bearer).expect(200);
    const ids = (routing.body as { node_id: string }[]).map((entry) => entry.node_id);
    const nodes = await t.http().get('/api/v1/admin/nodes').set(owner.bearer).expect(200);
    const list = (nodes.body.items ?? nodes.body) as RoutedNode[];
    return ids.map((id) => list.find((node) => node.id === id)!);
  }

  const fetchAs = (path: string, userAgent: string, headers: Record<string, string> = {}) =>
    t.http().get(path).set('User-Agent', userAgent).set(headers);

  async function devicesOf(user: TestUser) {
    const response = await t.http().get('/api/v1/users/me/devices').set(user.bearer).expect(200);
    return response.body as {
      device_limit: number;
      devices: { id: string; source: string; name: string; client: string | null }[];
    };
  }

  const vlessIdOf = async (user: TestUser, deviceId: string): Promise<string> => {
    const [row] = await t.dataSource.query(`SELECT vless_id FROM devices WHERE id = $1`, [
      deviceId,
    ]);
    expect(row.vless_id).toMatch(UUID);
    expect((await devicesOf(user)).devices.map((d) => d.id)).toContain(deviceId);
    return row.vless_id as string;
  };

  it('gives each app its format, every node of the share with that device’s own id', async () => {
    await t
      .http()
      .put('/api/v1/admin/plans/family')
      .set(owner.bearer)
      .send({
        duration_days: 30,
        traffic_limit_bytes: 10 ** 12,
        prices: { USD: '900' },
        active: true,
        device_limit: 6,
      })
      .expect(200);
    const user = await newUser(t, 'seed', {
      planName: 'family',
      subscriptionExpiresAt: new Date(Date.now() + 86_400_000),
    });
    const { path } = await linkOf(user);
    const share = await shareOf(user);
    expect(share).toHaveLength(SHARE);
    const me = (await t.http().get('/api/v1/users/me').set(user.bearer).expect(200)).body;

    // v2rayNG before 1.8.29: base64 of vless:// URIs.
    const v2rayng = await fetchAs(path, 'v2rayNG/1.8.5').expect(200);
    const uris = Buffer.from(v2rayng.text, 'base64').toString('utf8').split('\n');
    expect(uris).toHaveLength(SHARE);
    const parsed = uris.map((uri) => new URL(uri));
    const [ngDevice] = (await devicesOf(user)).devices;
    expect(ngDevice.source).toBe('app');
    const ngId = await vlessIdOf(user, ngDevice.id);
    for (const node of share) {
      const uri = parsed.find((u) => decodeURIComponent(u.hash.slice(1)) === node.name)!;
      expect(uri.protocol).toBe('vless:');
      expect(uri.username).toBe(ngId);
      expect(uri.hostname).toBe(node.host);
      expect(Number(uri.port)).toBe(node.tunnel_port);
      expect(uri.searchParams.get('security')).toBe('reality');
      expect(uri.searchParams.get('pbk')).toBe(node.public_key);
      expect(uri.searchParams.get('sid')).toBe(node.tunnel_short_id);
      expect(uri.searchParams.get('sni')).toBe(node.sni_domain);
      expect(uri.searchParams.get('flow')).toBe('xtls-rprx-vision');
      expect(uri.searchParams.get('encryption')).toBe('none');
      expect(uri.searchParams.get('fp')).toBe('chrome');
    }
    // The headers, with the numbers /users/me shows.
    expect(v2rayng.headers['subscription-userinfo']).toBe(
      `upload=0; download=${me.traffic.used_bytes}; total=${me.traffic.limit_bytes}; expire=${Math.floor(
        Date.parse(me.subscription.expires_at) / 1000,
      )}`,
    );
    expect(v2rayng.headers['profile-update-interval']).toBe('12');
    expect(v2rayng.headers['profile-title']).toBe(
      `base64:${Buffer.from('vpn.example.test').toString('base64')}`,
    );
    expect(v2rayng.headers['profile-web-page-url']).toBe('https://vpn.example.test/account');
    expect(v2rayng.headers['support-url']).toBe('https://vpn.example.test/support');
    expect(v2rayng.headers['content-disposition']).toMatch(/^attachment; filename="/);
    expect(v2rayng.headers['cache-control']).toBe('no-store');
    expect(v2rayng.headers.announce).toBeUndefined();

    // Happ with a HWID: complete Xray configs, a device of its own.
    const happ = await fetchAs(path, 'Happ/2.3.1', {
      'x-hwid': 'HappHwid-0001',
      'x-device-model': 'iPhone 15',
    }).expect(200);
    expect(happ.headers['content-type']).toMatch(/^application\/json/);
    const configs = JSON.parse(happ.text) as {
      remarks: string;
      inbounds: { protocol: string; listen: string }[];
      outbounds: {
        protocol: string;
        settings?: {
          vnext: { address: string; port: number; users: { id: string; flow: string }[] }[];
        };
        streamSettings?: { security: string; realitySettings: Record<string, string> };
      }[];
    }[];
    const happDevice = (await devicesOf(user)).devices.find((d) => d.source === 'hwid')!;
    expect(happDevice.name).toBe('iPhone 15');
    const happId = await vlessIdOf(user, happDevice.id);
    expect(happId).not.toBe(ngId);
    expect(configs.map((c) => c.remarks).sort()).toEqual(share.map((n) => n.name).sort());
    for (const config of configs) {
      const node = share.find((n) => n.name === config.remarks)!;
      expect(config.inbounds.every((i) => i.listen === '127.0.0.1')).toBe(true);
      const proxy = config.outbounds.find((o) => o.protocol === 'vless')!;
      expect(proxy.settings!.vnext[0]).toMatchObject({
        address: node.host,
        port: node.tunnel_port,
      });
      expect(proxy.settings!.vnext[0].users[0]).toMatchObject({
        id: happId,
        flow: 'xtls-rprx-vision',
      });
      expect(proxy.streamSettings).toMatchObject({
        security: 'reality',
        realitySettings: {
          publicKey: node.public_key,
          shortId: node.tunnel_short_id,
          serverName: node.sni_domain,
        },
      });
      expect(config.outbounds.map((o) => o.protocol)).toContain('freedom');
    }

    // Clash Verge Rev: Clash Meta YAML, parsed with the yaml library.
    const clash = await fetchAs(path, 'clash-verge/v2.2.3').expect(200);
    const yaml = parseYaml(clash.text) as {
      proxies: Record<string, unknown>[];
      'proxy-groups': { name: string; type: string; proxies: string[] }[];
      rules: string[];
    };
    const clashId = (await devicesOf(user)).devices.find((d) => d.name === 'clash-verge')!;
    const clashVless = await vlessIdOf(user, clashId.id);
    expect(yaml.proxies).toHaveLength(SHARE);
    for (const proxy of yaml.proxies) {
      const node = share.find((n) => n.name === proxy.name)!;
      expect(proxy).toMatchObject({
        type: 'vless',
        server: node.host,
        port: node.tunnel_port,
        uuid: clashVless,
        tls: true,
        flow: 'xtls-rprx-vision',
        servername: node.sni_domain,
        'client-fingerprint': 'chrome',
        'reality-opts': { 'public-key': node.public_key, 'short-id': node.tunnel_short_id },
      });
    }
    expect(yaml['proxy-groups'].map((g) => g.type).sort()).toEqual(['select', 'url-test']);
    expect(yaml.rules).toEqual([
      `MATCH,${yaml['proxy-groups'].find((g) => g.type === 'select')!.name}`,
    ]);

    // sing-box's Android app and Hiddify: sing-box JSON. Without a HWID each app is a device.
    for (const agent of ['SFA/1.11.4 (Android 14)', 'HiddifyNext/2.5.7 (android) like ClashMeta']) {
      const answer = await fetchAs(path, agent).expect(200);
      const config = JSON.parse(answer.text) as {
        inbounds: { type: string }[];
        outbounds: { type: string; tag: string; server?: string; uuid?: string; tls?: object }[];
      };
      expect(config.inbounds[0].type).toBe('mixed');
      const vless = config.outbounds.filter((o) => o.type === 'vless');
      expect(vless.map((o) => o.tag).sort()).toEqual(share.map((n) => n.name).sort());
      expect(config.outbounds.map((o) => o.type)).toEqual(
        expect.arrayContaining(['selector', 'urltest', 'direct']),
      );
      for (const outbound of vless) {
        const node = share.find((n) => n.name === outbound.tag)!;
        expect(outbound.server).toBe(node.host);
        expect(outbound.tls).toMatchObject({
          enabled: true,
          server_name: node.sni_domain,
          utls: { enabled: true, fingerprint: 'chrome' },
          reality: { enabled: true, public_key: node.public_key, short_id: node.tunnel_short_id },
        });
      }
    }
    const afterApps = (await devicesOf(user)).devices;
    expect(afterApps.map((d) => d.name).sort()).toEqual([
      'clash-verge',
      'hiddifynext',
      'iPhone 15',
      'sfa',
      'v2rayng',
    ]);

    // A browser gets the subscription page, not indexed.
    const page = await t
      .http()
      .get(path)
      .set('Accept', 'text/html,application/xhtml+xml,*/*;q=0.8')
      .expect(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.headers['x-robots-tag']).toContain('noindex');
    expect(page.text).toContain('<title>app</title>');
  });

  it('a plan whose traffic starts again each period: the link says when, as /users/me does', async () => {
    const user = await subscribedUser(t);
    const resetAt = new Date(Date.now() + 5 * 86_400_000);
    resetAt.setUTCHours(0, 0, 0, 0);
    await t.dataSource.query(`UPDATE users SET traffic_reset_at = $2 WHERE id = $1`, [
      user.user.id,
      resetAt,
    ]);
    const me = (await t.http().get('/api/v1/users/me').set(user.bearer).expect(200)).body;
    expect(me.traffic.resets_at).toBe(resetAt.toISOString());
    const { path } = await linkOf(user);
    const answer = await fetchAs(path, 'Happ/2.3.1').expect(200);
    expect(answer.headers['subscription-refill-date']).toBe(String(resetAt.getTime() / 1000));
    const other = await subscribedUser(t);
    const plain = await fetchAs((await linkOf(other)).path, 'Happ/2.3.1').expect(200);
    expect(plain.headers['subscription-refill-date']).toBeUndefined();
  });

  it('?format= overrides the User-Agent', async () => {
    const user = await subscribedUser(t);
    const { path } = await linkOf(user);
    const answer = await fetchAs(`${path}?format=sing-box`, 'v2rayNG/1.8.5').expect(200);
    expect(JSON.parse(answer.text).outbounds).toBeDefined();
    // `@Res({ passthrough: true })` leaves the answer to Nest: a refusal is the filter's body.
    const refused = await fetchAs(`${path}?format=nonsense`, 'v2rayNG/1.8.5').expect(400);
    expect(refused.body).toMatchObject({
      statusCode: 400,
      code: 'VALIDATION_FAILED',
      details: [{ field: 'format' }],
      request_id: refused.headers['x-request-id'],
    });
  });

  it('makes one device per HWID, refuses the third of a limit of 2, and one HWID twenty times at once is one device', async () => {
    await t
      .http()
      .put('/api/v1/admin/plans/two')
      .set(owner.bearer)
      .send({
        duration_days: 30,
        traffic_limit_bytes: 10 ** 12,
        prices: { USD: '100' },
        active: true,
        device_limit: 2,
      })
      .expect(200);
    const user = await newUser(t, 'seed', {
      planName: 'two',
      subscriptionExpiresAt: new Date(Date.now() + 86_400_000),
    });
    const { path } = await linkOf(user);
    await Promise.all(
      Array.from({ length: 20 }, () =>
        fetchAs(path, 'Happ/2.3.1', { 'x-hwid': 'same-device-1' }).expect(200),
      ),
    );
    expect((await devicesOf(user)).devices).toHaveLength(1);
    await fetchAs(path, 'Happ/2.3.1', { 'x-hwid': 'other-device-2' }).expect(200);
    const two = (await devicesOf(user)).devices;
    expect(two).toHaveLength(2);
    const ids = await Promise.all(two.map((d) => vlessIdOf(user, d.id)));
    expect(new Set(ids).size).toBe(2);

    const third = await fetchAs(path, 'Happ/2.3.1', { 'x-hwid': 'third-device-3' }).expect(200);
    const configs = JSON.parse(third.text) as { remarks: string }[];
    expect(configs).toHaveLength(1);
    expect(configs[0].remarks).toBe(
      'Device limit 2 of 2: remove one at https://vpn.example.test/account',
    );
    expect(Buffer.from(third.headers.announce.replace(/^base64:/, ''), 'base64').toString()).toBe(
      configs[0].remarks,
    );
    expect((await devicesOf(user)).devices).toHaveLength(2);

    const refused = await t
      .http()
      .post('/api/v1/users/me/devices')
      .set(user.bearer)
      .send({ name: 'Tablet' })
      .expect(409);
    expect(refused.body.code).toBe('DEVICE_LIMIT');

    // Removing one: the others' link still works, and a new one fits.
    await t.http().delete(`/api/v1/users/me/devices/${two[0].id}`).set(user.bearer).expect(204);
    const made = await t
      .http()
      .post('/api/v1/users/me/devices')
      .set(user.bearer)
      .send({ name: 'Tablet' })
      .expect(201);
    expect(made.body.device).toMatchObject({ name: 'Tablet', source: 'link' });
    const own = new URL(made.body.subscription_url as string).pathname;
    const ownAnswer = await fetchAs(own, 'v2rayNG/1.8.5').expect(200);
    const ownUri = new URL(Buffer.from(ownAnswer.text, 'base64').toString().split('\n')[0]);
    expect(ownUri.username).toBe(await vlessIdOf(user, made.body.device.id as string));
    // Renamed, then listed under its new name.
    await t
      .http()
      .patch(`/api/v1/users/me/devices/${made.body.device.id}`)
      .set(user.bearer)
      .send({ name: 'Kitchen tablet' })
      .expect(200);
    expect((await devicesOf(user)).devices.map((d) => d.name)).toContain('Kitchen tablet');
  });

  it('rotation: the old link is 404, the new one works, devices keep their ids', async () => {
    const user = await subscribedUser(t);
    const { path } = await linkOf(user);
    await fetchAs(path, 'v2rayNG/1.8.5').expect(200);
    const [device] = (await devicesOf(user)).devices;
    const idBefore = await vlessIdOf(user, device.id);
    const rotated = await t
      .http()
      .post('/api/v1/users/me/subscription-link/rotate')
      .set(user.bearer)
      .expect(200);
    const newPath = new URL(rotated.body.subscription_url as string).pathname;
    expect(newPath).not.toBe(path);
    expect((await fetchAs(path, 'v2rayNG/1.8.5')).status).toBe(404);
    const again = await fetchAs(newPath, 'v2rayNG/1.8.5').expect(200);
    const uri = new URL(Buffer.from(again.text, 'base64').toString().split('\n')[0]);
    expect(uri.username).toBe(idBefore);
    expect((await linkOf(user)).path).toBe(newPath);
  });

  it('expired, used up and blocked: one entry that says why, and the same words in announce', async () => {
    const cases: [string, Record<string, unknown>, string][] = [
      [
        'expired',
        { subscriptionExpiresAt: new Date(Date.now() - 1000) },
        'Subscription ended: renew at https://vpn.example.test/plans',
      ],
      [
        'used up',
        { trafficUsedBytes: String(200 * 2 ** 30) },
        'Traffic used up: renew at https://vpn.example.test/plans',
      ],
      [
        'blocked',
        { blockedAt: new Date() },
        'Account blocked: write to support at https://vpn.example.test/support',
      ],
    ];
    for (const [, fields, words] of cases) {
      const user = await subscribedUser(t);
      const { path } = await linkOf(user);
      await t.dataSource.getRepository('User').update({ id: user.user.id }, fields);
      const answer = await fetchAs(path, 'v2rayNG/1.8.5').expect(200);
      const uris = Buffer.from(answer.text, 'base64').toString().split('\n');
      expect(uris).toHaveLength(1);
      const uri = new URL(uris[0]);
      expect(decodeURIComponent(uri.hash.slice(1))).toBe(words);
      expect(uri.hostname).toBe('0.0.0.0');
      expect(
        Buffer.from(answer.headers.announce.replace(/^base64:/, ''), 'base64').toString(),
      ).toBe(words);
      const yaml = parseYaml((await fetchAs(path, 'clash-verge/v2.2.3').expect(200)).text) as {
        proxies: { name: string }[];
      };
      expect(yaml.proxies.map((p) => p.name)).toEqual([words]);
      // Nothing to connect to makes no device.
      const [{ count }] = await t.dataSource.query(
        `SELECT count(*)::int AS count FROM devices WHERE user_id = $1`,
        [user.user.id],
      );
      expect(count).toBe(0);
    }
  });

  it('an unknown token is 404: to an app, and to a browser with the page that says so', async () => {
    const page = await t
      .http()
      .get('/sub/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA')
      .set('Accept', 'text/html,*/*;q=0.8')
      .expect(404);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.headers['x-robots-tag']).toContain('noindex');

    expect((await fetchAs('/sub/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', 'v2rayNG/1.8.5')).status).toBe(
      404,
    );
    expect((await fetchAs('/sub/short', 'v2rayNG/1.8.5')).status).toBe(404);
  });

  it('staff see a user’s devices and remove one with a reason, audited', async () => {
    const user = await subscribedUser(t);
    const { path } = await linkOf(user);
    await fetchAs(path, 'v2rayNG/1.8.5').expect(200);
    const list = await t
      .http()
      .get(`/api/v1/admin/users/${user.user.id}/devices`)
      .set(owner.bearer)
      .expect(200);
    expect(list.body.device_limit).toBe(3);
    const [device] = list.body.devices as { id: string }[];
    await t
      .http()
      .delete(`/api/v1/admin/users/${user.user.id}/devices/${device.id}`)
      .set(owner.bearer)
      .send({ reason: 'shared on a forum' })
      .expect(204);
    expect((await devicesOf(user)).devices).toHaveLength(0);
    const [entry] = await t.dataSource.query(
      `SELECT action, after FROM audit_log WHERE target_id = $1 ORDER BY created_at DESC LIMIT 1`,
      [user.user.id],
    );
    expect(entry.action).toBe('user.device_removed');
    expect(entry.after.reason).toBe('shared on a forum');
  });
});
