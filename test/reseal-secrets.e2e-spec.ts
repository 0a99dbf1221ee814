import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SecretBox } from '../src/common/secret-box';
import { loadSettings } from '../src/config/settings';
import { runResealSecrets } from '../src/nodes/reseal-secrets.command';
import { ProvisioningService } from '../src/nodes/provisioning.service';
import { type FakeSshServer, sshKeyPair, startFakeSsh } from './fakes/ssh-server';
import { startTestApp, TEST_SECRETS, type TestApp } from './harness/app';
import { newUser } from './harness/factories';
import { createNode } from './harness/nodes';

const OLD_KEY = TEST_SECRETS.DATA_ENCRYPTION_KEY;
const NEW_KEY = 'a-new-data-encryption-key-0123456789abcdef';

/**
 * Rotating DATA_ENCRYPTION_KEY: the new key, the old one in DATA_ENCRYPTION_KEY_PREVIOUS,
 * `--reseal-secrets`; then the service runs on the new key alone and still reaches its nodes.
 */
describe('rotating DATA_ENCRYPTION_KEY', () => {
  jest.setTimeout(60_000);
  let before: TestApp;
  let after: TestApp | undefined;
  let ssh: FakeSshServer;
  const bundleDir = mkdtempSync(join(tmpdir(), 'agent-bundle-'));
  const bundle = join(bundleDir, 'agent.js');
  writeFileSync(bundle, '// the node agent\n');
  afterAll(async () => {
    await after?.app.close();
    await ssh?.close();
    await before?.close();
    rmSync(bundleDir, { recursive: true, force: true });
  });

  const sealed = async (id: string): Promise<string[]> => {
    const [row] = (await before.dataSource.query(
      `SELECT ssh_private_key_enc, reality_private_key_enc, admission_key_enc, agent_secret_enc
         FROM nodes WHERE id = $1`,
      [id],
    )) as Record<string, string | null>[];
    // Every sealed value of a node made now: none is missing.
    expect(Object.values(row).every((value) => typeof value === 'string')).toBe(true);
    return Object.values(row) as string[];
  };
  const keyIds = (values: string[]) => values.map((value) => value.split('.')[1]);
  const reseal = (env: Record<string, string>) =>
    runResealSecrets(
      loadSettings({ NODE_ENV: 'test', DATA_DIR: '/nonexistent', ...TEST_SECRETS, ...env }),
      before.databaseUrl,
    );

  it('reseals every node key under the new key; the service then provisions on the new key alone', async () => {
    before = await startTestApp();
    const owner = await newUser(before, 'owner');
    const key = sshKeyPair();
    ssh = await startFakeSsh({ username: 'root', authorizedKey: key.publicKey });
    const node = await createNode(before, owner, {
      ssh_port: ssh.port,
      ssh_private_key: key.privateKey,
    });
    const original = await sealed(node.id);

    // Without the old key nothing opens: the command changes nothing and says which setting.
    expect(await reseal({ DATA_ENCRYPTION_KEY: NEW_KEY })).toBe(1);
    expect(await sealed(node.id)).toEqual(original);

    const moves = { DATA_ENCRYPTION_KEY: NEW_KEY, DATA_ENCRYPTION_KEY_PREVIOUS: OLD_KEY };
    expect(await reseal(moves)).toBe(0);
    const resealed = await sealed(node.id);
    expect(new Set(keyIds(resealed)).size).toBe(1);
    expect(keyIds(resealed)[0]).not.toBe(keyIds(original)[0]);
    // Run again: nothing left to move.
    expect(await reseal(moves)).toBe(0);
    expect(await sealed(node.id)).toEqual(resealed);

    after = await startTestApp(
      { DATA_ENCRYPTION_KEY: NEW_KEY, NODE_AGENT_BUNDLE: bundle },
      { database: before.database },
    );
    await after
      .http()
      .post(`/api/v1/admin/nodes/${node.id}/provision`)
      .set(owner.bearer)
      .expect(202);
    await after.app.get(ProvisioningService).idle();
    const state = await after.http().get(`/api/v1/admin/nodes/${node.id}`).set(owner.bearer);
    expect(state.body).toMatchObject({ provision_state: 'ready', last_error: null });
    expect(ssh.logins).toContain('root');
    // The node receives the same secret and TLS key it was made with.
    const made = new SecretBox(OLD_KEY);
    const agentSettings = ssh.uploads.get('/opt/vpn-node/staging/agent.env') ?? '';
    expect(agentSettings).toContain(`VPN_NODE_SECRET=${made.open(original[3])}`);
    expect(ssh.uploads.get('/opt/vpn-node/staging/tls.key')).toBe(made.open(original[2]));
  });
});
