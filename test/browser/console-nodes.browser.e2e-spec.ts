/**
 * The console's Nodes page in a real Chromium against the service in its own process: the owner
 * creates a node, provisions it against this test's own SSH server (a real handshake, ssh2) and
 * watches the progress until `ready`, sees the list refresh by itself, reads the node's daily
 * traffic, changes a setting and sees a provisioning fail with its reason, restarts and deletes
 * the node. A moderator without node access has no Nodes tab and is refused by the routes.
 * Every page is checked with axe-core; screenshots go to test-artifacts/console/.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from 'pg';
import type { Page } from 'playwright-core';
import { type FakeSshServer, sshKeyPair, startFakeSsh } from '../fakes/ssh-server';
import type { TestApp } from '../harness/app';
import { newUser, type TestUser } from '../harness/factories';
import { tcpListener, waitFor } from '../harness/nodes';
import {
  type BrowserApp,
  expectAccessible,
  pathname,
  signInToConsole,
  startBrowserApp,
} from './browser-app';

interface NodeRow {
  id: string;
  name: string;
  ssh_user: string;
  ssh_port: number;
  tunnel_port: number;
  sni_domain: string;
  traffic_multiplier: string;
  ssh_private_key_enc: string;
  provision_state: string;
  last_error: string | null;
  deleted_at: Date | null;
}

describe('the console: Nodes', () => {
  jest.setTimeout(120_000);
  let app: BrowserApp;
  let side: TestApp;
  let db: Client;
  let ssh: FakeSshServer;
  let tunnel: Awaited<ReturnType<typeof tcpListener>>;
  let owner: TestUser;
  const key = sshKeyPair();
  // The agent bundle `npm run build` makes; a stand-in, so the test needs no build of the agent.
  const bundleDir = mkdtempSync(join(tmpdir(), 'console-agent-'));

  beforeAll(async () => {
    const bundle = join(bundleDir, 'agent.js');
    writeFileSync(bundle, "'use strict';\nconsole.log('agent');\n");
    // Each SSH step answers after 150 ms: the provisioning lasts long enough to be seen running.
    [ssh, tunnel] = await Promise.all([
      startFakeSsh({ username: 'deploy', authorizedKey: key.publicKey, stepDelayMs: 150 }),
      tcpListener(),
    ]);
    app = await startBrowserApp('console', {
      NODE_PRIVATE_HOSTS_ALLOWED: 'true',
      NODE_AGENT_BUNDLE: bundle,
      NODE_HEALTH_INTERVAL_S: '1',
    });
    ({ side, db } = app);
    owner = await newUser(side, 'owner');
  }, 180_000);

  afterAll(async () => {
    await app?.close();
    await Promise.all([ssh?.close(), tunnel?.close()]);
    rmSync(bundleDir, { recursive: true, force: true });
  });

  afterEach(() => {
    expect(app.takePageErrors()).toEqual([]);
  });

  const shot = (page: Page, name: string) => app.shot(page, name);
  const nodeRow = async (name: string): Promise<NodeRow> =>
    ((await db.query(`SELECT * FROM nodes WHERE name = $1`, [name])) as { rows: NodeRow[] })
      .rows[0];
  /** The status line of the node's provisioning section. */
  const provisioningStatus = (page: Page) =>
    page.getByRole('region', { name: 'Provisioning' }).getByRole('status');

  it('the owner creates a node, provisions it over SSH and watches it until ready', async () => {
    const page = await app.newPage();
    await signInToConsole(app, page, owner);
    await page.getByRole('tab', { name: 'Nodes' }).click();
    const list = page.getByRole('region', { name: 'Nodes' });
    await list.getByText('No nodes yet.').waitFor();
    expect(pathname(page)).toBe('/staff/nodes');
    await expectAccessible(page, 'nodes: empty list');

    await list.getByRole('link', { name: 'Add a node' }).click();
    const form = page.getByRole('region', { name: 'New node' });
    await form.getByLabel('Name').fill('fra-1');
    await form.getByLabel(/^Host/).fill('127.0.0.1');
    await form.getByLabel('SSH port').fill(String(ssh.port));
    await form.getByLabel('SSH user').fill('deploy');
    await form.getByLabel('SSH private key').fill(key.privateKey);
    await form.getByLabel('Tunnel port').fill(String(tunnel.port));
    await form.getByLabel('Agent port').fill('9443');
    await form.getByLabel('Camouflage domain (SNI)').fill('www.camouflage.test');
    await form.getByLabel('Traffic multiplier').fill('2');
    await expectAccessible(page, 'nodes: new node form');
    await shot(page, 'nodes-new');
    await form.getByRole('button', { name: 'Create the node' }).click();

    await page.getByRole('heading', { name: 'fra-1', level: 2 }).waitFor();
    const row = await nodeRow('fra-1');
    expect(pathname(page)).toBe(`/staff/nodes/${row.id}`);
    expect(row).toMatchObject({
      ssh_user: 'deploy',
      ssh_port: ssh.port,
      tunnel_port: tunnel.port,
      sni_domain: 'www.camouflage.test',
      traffic_multiplier: '2.000',
      provision_state: 'new',
    });
    // The key went in; nothing on the page shows it back.
    expect(await page.content()).not.toContain('PRIVATE KEY');
    await provisioningStatus(page).getByText('Not provisioned yet').waitFor();

    await page.getByRole('button', { name: 'Provision', exact: true }).click();
    await provisioningStatus(page).getByText('Provisioning over SSH').waitFor();
    await page.getByRole('region', { name: 'Provisioning' }).getByRole('progressbar').waitFor();
    await shot(page, 'nodes-provisioning');
    await provisioningStatus(page)
      .getByText('Provisioned: the node is ready.')
      .waitFor({ timeout: 30_000 });
    expect((await nodeRow('fra-1')).provision_state).toBe('ready');
    expect(ssh.logins).toContain('deploy');
    expect(ssh.uploads.has('/opt/vpn-node/provision.sh')).toBe(true);
    // The health check reaches the tunnel port, but no agent has reported yet: the node's page
    // does not call it online (it is after the traffic report below).
    await page
      .getByRole('region', { name: 'fra-1' })
      .getByText('Not checked', { exact: true })
      .waitFor({ timeout: 15_000 });
    await expectAccessible(page, 'nodes: node ready');
    await shot(page, 'nodes-ready');
  });

  it('the list refreshes by itself, and the node page charts its daily traffic', async () => {
    const page = await app.newPage();
    await signInToConsole(app, page, owner);
    await page.goto(app.url('/staff/nodes'));
    const list = page.getByRole('region', { name: 'Nodes' });
    const nodeLine = list.getByRole('row', { name: /fra-1/ });
    await nodeLine.waitFor();
    expect(await nodeLine.getByRole('cell').nth(4).textContent()).toBe('never');

    // A traffic report reaches the service: the list shows its time without a reload.
    const { id } = await nodeRow('fra-1');
    const subscriber = await newUser(side, 'seed');
    const report = await fetch(app.url('/api/v1/internal/traffic'), {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        'X-Internal-Secret': side.settings.internalSecret,
      },
      body: JSON.stringify({
        node_id: id,
        report_id: randomUUID(),
        entries: [{ user_id: subscriber.user.id, bytes_up: 1024, bytes_down: 3 * 1024 * 1024 }],
      }),
    });
    expect(report.status).toBe(200);
    await nodeLine.getByRole('cell').nth(4).getByText(/UTC$/).waitFor({ timeout: 12_000 });
    await expectAccessible(page, 'nodes: list');
    await shot(page, 'nodes-list');

    await list.getByRole('link', { name: 'fra-1' }).click();
    // Its tunnel port answers and its agent has reported: online now.
    await page
      .getByRole('region', { name: 'fra-1' })
      .getByText('Online', { exact: true })
      .waitFor({ timeout: 15_000 });
    const traffic = page.getByRole('region', { name: 'Daily traffic' });
    // Raw 3 MB + 1 KB; counted twice over (multiplier 2).
    await traffic
      .getByText(
        'In the last 30 days (UTC): 3 MB to users, 1 KB from users; 6 MB counted against limits.',
      )
      .waitFor();
    await traffic.getByText('7 days').click();
    await traffic.getByText(/^In the last 7 days \(UTC\): 3 MB to users/).waitFor();
    expect(await traffic.locator('.recharts-bar-rectangle').count()).toBeGreaterThan(0);
    await expectAccessible(page, 'nodes: traffic chart');
    await shot(page, 'nodes-traffic');
  });

  it('the owner restarts the node, changes a setting, sees a provisioning fail with its reason, and deletes it', async () => {
    const page = await app.newPage();
    await signInToConsole(app, page, owner);
    const before = await nodeRow('fra-1');
    await page.goto(app.url(`/staff/nodes/${before.id}`));
    const actions = page.getByRole('region', { name: 'Provisioning' });

    await actions.getByRole('button', { name: 'Restart' }).click();
    const restart = page.getByRole('dialog', { name: 'Restart' });
    await restart
      .getByText(
        'Restart the tunnel on fra-1? Users connected through it are dropped for a moment.',
      )
      .waitFor();
    await expectAccessible(page, 'nodes: restart dialog');
    await restart.getByRole('button', { name: 'Confirm' }).click();
    await page.getByText('Restart of fra-1 requested').waitFor();
    await waitFor(
      () => Promise.resolve(ssh.commands.some((c) => c.command.includes('systemctl restart'))),
      10_000,
      'the restart command on the node',
    );

    // Settings: the SSH user changes; the stored key stays as it was (the field is left empty).
    const settings = page.getByRole('region', { name: 'Settings' });
    await settings.getByRole('button', { name: 'Edit settings' }).click();
    expect(await settings.getByLabel('SSH private key').inputValue()).toBe('');
    await settings.getByLabel('SSH user').fill('nobody');
    await expectAccessible(page, 'nodes: edit form');
    await settings.getByRole('button', { name: 'Save' }).click();
    await page.getByText('The node’s settings are saved.').waitFor();
    const edited = await nodeRow('fra-1');
    expect(edited.ssh_user).toBe('nobody');
    expect(edited.ssh_private_key_enc).toBe(before.ssh_private_key_enc);

    // The SSH server refuses that user: the provisioning ends failed, its reason on the page.
    await actions.getByRole('button', { name: 'Provision again' }).click();
    await actions.getByText('Provisioning failed').waitFor({ timeout: 30_000 });
    const failed = await nodeRow('fra-1');
    expect(failed.provision_state).toBe('failed');
    expect(failed.last_error).toBeTruthy();
    await actions.getByText(failed.last_error!).waitFor();
    await expectAccessible(page, 'nodes: provisioning failed');
    await shot(page, 'nodes-failed');

    await actions.getByRole('button', { name: 'Delete' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete' });
    await dialog
      .getByText('Delete the node fra-1 (127.0.0.1)? It leaves routing and health checks at once')
      .waitFor();
    await dialog.getByRole('button', { name: 'Confirm' }).click();
    await page.getByRole('region', { name: 'Nodes' }).getByText('No nodes yet.').waitFor();
    expect(pathname(page)).toBe('/staff/nodes');
    expect((await nodeRow('fra-1')).deleted_at).not.toBeNull();
  });

  it('a moderator without node access sees no Nodes tab and is refused by the node routes', async () => {
    const [plain, granted] = await Promise.all([
      newUser(side, 'moderator'),
      newUser(side, 'moderator', { canManageNodes: true }),
    ]);
    const node = await side
      .http()
      .post('/api/v1/admin/nodes')
      .set(owner.bearer)
      .send({
        name: 'ams-1',
        host: '127.0.0.1',
        ssh_private_key: key.privateKey,
        sni_domain: 'www.example.com',
      })
      .expect(201);
    const id = (node.body as { id: string }).id;

    const page = await app.newPage();
    await signInToConsole(app, page, plain);
    expect(await page.getByRole('tab', { name: 'Nodes' }).count()).toBe(0);
    await page.goto(app.url(`/staff/nodes/${id}`));
    await page.getByRole('heading', { name: 'Staff console' }).waitFor();
    expect(await page.getByRole('heading', { name: 'ams-1' }).count()).toBe(0);
    // Called anyway, from the moderator's own signed-in browser: every node route says 403.
    const statuses = await page.evaluate(async (nodeId) => {
      const call = async (method: string, path: string, body?: unknown) => {
        const answer = await fetch(`/api/v1${path}`, {
          method,
          headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        return `${answer.status} ${((await answer.json()) as { code: string }).code}`;
      };
      return [
        await call('GET', '/admin/nodes'),
        await call('GET', `/admin/nodes/${nodeId}`),
        await call('GET', `/admin/nodes/${nodeId}/traffic`),
        await call('PATCH', `/admin/nodes/${nodeId}`, { name: 'taken' }),
        await call('POST', `/admin/nodes/${nodeId}/provision`),
        await call('POST', `/admin/nodes/${nodeId}/restart`),
        await call('DELETE', `/admin/nodes/${nodeId}`),
      ];
    }, id);
    expect(statuses).toEqual(Array(7).fill('403 FORBIDDEN'));
    const untouched = await nodeRow('ams-1');
    expect([untouched.provision_state, untouched.deleted_at]).toEqual(['new', null]);
    await expectAccessible(page, 'console: moderator without node access');
    await shot(page, 'nodes-moderator-refused');

    // Given node access, a moderator has the tab and the list.
    const other = await app.newPage();
    await signInToConsole(app, other, granted);
    await other.getByRole('tab', { name: 'Nodes' }).click();
    await other
      .getByRole('region', { name: 'Nodes' })
      .getByRole('link', { name: 'ams-1' })
      .waitFor();
  });
});
