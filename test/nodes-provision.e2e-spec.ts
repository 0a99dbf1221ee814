import { createPrivateKey, createPublicKey, X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ProvisioningService } from '../src/nodes/provisioning.service';
import { type FakeSshServer, sshKeyPair, startFakeSsh } from './fakes/ssh-server';
import { startTestApp, type TestApp } from './harness/app';
import { newUser, type TestUser } from './harness/factories';
import { createNode, nodeSecret } from './harness/nodes';

const XRAY_DIGEST = 'ab'.repeat(32);
const SCRIPT = readFileSync(join(__dirname, '..', 'deploy', 'node', 'provision.sh'), 'utf8');

/** The x25519 public key (base64url) of a raw private key (base64url). */
function x25519PublicOf(privateKey: string): string {
  const der = Buffer.concat([
    Buffer.from('302e020100300506032b656e04220420', 'hex'),
    Buffer.from(privateKey, 'base64url'),
  ]);
  const key = createPublicKey(createPrivateKey({ key: der, format: 'der', type: 'pkcs8' }));
  return key.export({ format: 'jwk' }).x!;
}

describe('nodes: provisioning and restarts over SSH', () => {
  let t: TestApp;
  let owner: TestUser;
  const servers: FakeSshServer[] = [];
  // The agent bundle `npm run build` makes; a stand-in here, so the test needs no build.
  const bundleDir = mkdtempSync(join(tmpdir(), 'agent-bundle-'));
  const bundle = join(bundleDir, 'agent.js');
  const BUNDLE_TEXT = "'use strict';\n// the node agent\nconsole.log('agent');\n";

  beforeAll(async () => {
    writeFileSync(bundle, BUNDLE_TEXT);
    t = await startTestApp({
      PUBLIC_API_URL: 'https://api.example.test',
      NODE_AGENT_BUNDLE: bundle,
      XRAY_ARCHIVE_SHA256: XRAY_DIGEST.toUpperCase(),
    });
    owner = await newUser(t, 'owner');
  });
  afterAll(async () => {
    await Promise.all(servers.map((server) => server.close()));
    await t.close();
    rmSync(bundleDir, { recursive: true, force: true });
  });

  /** A node whose SSH server is a fake of this test, with a key only it accepts. */
  async function nodeWithServer(
    options: { exitCode?: number; failAll?: boolean; stepDelayMs?: number; user?: string } = {},
    overrides: Record<string, unknown> = {},
  ) {
    const key = sshKeyPair();
    const username = options.user ?? 'deploy';
    const server = await startFakeSsh({ username, authorizedKey: key.publicKey, ...options });
    servers.push(server);
    const node = await createNode(t, owner, {
      ssh_port: server.port,
      ssh_user: username,
      ssh_private_key: key.privateKey,
      tunnel_port: 8443,
      admission_port: 9443,
      sni_domain: 'www.camouflage.test',
      ...overrides,
    });
    return { node, server, key };
  }

  const provision = (id: string) =>
    t.http().post(`/api/v1/admin/nodes/${id}/provision`).set(owner.bearer);
  const read = async (id: string) =>
    (await t.http().get(`/api/v1/admin/nodes/${id}`).set(owner.bearer)).body as Record<
      string,
      unknown
    >;
  const settled = () => t.app.get(ProvisioningService).idle();

  it('signs in with the node user and key, sends the script, the config and the agent, and ends ready', async () => {
    const { node, server, key } = await nodeWithServer();
    const response = await provision(node.id);
    expect(response.status).toBe(202);
    expect(response.body).toEqual({ id: node.id, provision_state: 'provisioning' });
    await settled();

    const after = await read(node.id);
    expect(after).toMatchObject({ provision_state: 'ready', last_error: null });
    expect(after.ssh_host_key_sha256).toBe(server.fingerprint); // the first key seen, recorded
    expect(server.logins).toEqual(['deploy']);

    expect(server.uploads.get('/opt/vpn-node/provision.sh')).toBe(SCRIPT);
    const config = JSON.parse(server.uploads.get('/opt/vpn-node/staging/xray-config.json')!) as {
      inbounds: { port: number; streamSettings: { realitySettings: Record<string, unknown> } }[];
    };
    const reality = config.inbounds[0].streamSettings.realitySettings;
    expect(config.inbounds[0].port).toBe(8443);
    expect(reality.serverNames).toEqual(['www.camouflage.test']);
    expect(reality.shortIds).toContain(node.tunnel_short_id);
    // The private key on the node is the one whose public half clients get.
    expect(x25519PublicOf(reality.privateKey as string)).toBe(node.public_key);

    // The core's API is a unix socket, and what a subscriber must not reach is blocked.
    const api = config.inbounds.find((inbound) => (inbound as { tag?: string }).tag === 'api');
    expect(api).toMatchObject({ listen: '/run/xray/api.sock' });
    expect((config as unknown as { log: unknown }).log).toEqual({
      loglevel: 'warning',
      access: '/run/xray/access.log',
    });
    expect(JSON.stringify(config)).toContain('"geoip:private"');

    // The agent's settings carry the node's own secret; INTERNAL_SECRET never leaves the service.
    const secret = await nodeSecret(t, node.id);
    const settings = server.uploads.get('/opt/vpn-node/staging/agent.env')!;
    for (const line of [
      'VPN_API_URL=https://api.example.test/api/v1',
      `VPN_NODE_ID=${node.id}`,
      `VPN_NODE_SECRET=${secret}`,
      'CORE_API=/run/xray/api.sock',
      'CORE_API_PREFIX=xray',
      'ADMISSION_PORT=9443',
      'TUNNEL_PORT=8443',
      'VPN_FLOW=xtls-rprx-vision',
      'CORE_ACCESS_LOG=/run/xray/access.log',
      'JOURNAL_DIR=/var/lib/vpn-node-agent',
    ]) {
      expect(settings.split('\n')).toContain(line);
    }
    const everything = [...server.uploads.values(), ...server.commands.map((c) => c.command)];
    expect(everything.join('\n')).not.toContain(t.settings.internalSecret);
    expect(server.uploads.has('/opt/vpn-node/staging/proxy.env')).toBe(false);

    // The agent itself, and its certificate (the one clients pin) with the matching key.
    expect(server.uploads.get('/opt/vpn-node/staging/agent.js')).toBe(BUNDLE_TEXT);
    const cert = new X509Certificate(server.uploads.get('/opt/vpn-node/staging/tls.crt')!);
    expect(cert.fingerprint256.replace(/:/g, '').toLowerCase()).toBe(node.admission_cert_sha256);
    const tlsKey = server.uploads.get('/opt/vpn-node/staging/tls.key')!;
    expect(cert.checkPrivateKey(createPrivateKey(tlsKey))).toBe(true);
    // Every file went through stdin into a file made 0600 before any byte landed.
    const uploads = server.commands.filter((c) => c.command.includes('.tmp'));
    expect(uploads.map((c) => /(?:cat > |tee )'([^']+)'/.exec(c.command)![1])).toEqual([
      '/opt/vpn-node/provision.sh',
      '/opt/vpn-node/staging/xray-config.json',
      '/opt/vpn-node/staging/agent.env',
      '/opt/vpn-node/staging/agent.js',
      '/opt/vpn-node/staging/tls.crt',
      '/opt/vpn-node/staging/tls.key',
    ]);
    for (const upload of uploads.slice(1))
      expect(upload.command).toMatch(/^umask 077 .* chmod 600 /);

    const run = server.commands[server.commands.length - 1];
    // The operator's pin of the Xray archive goes to the script, which checks the download with it.
    expect(run.command).toBe(`sudo -n bash '/opt/vpn-node/provision.sh' 8443 9443 ${XRAY_DIGEST}`);
    // A user other than root does every step through sudo -n, the uploads' folders included.
    for (const { command } of uploads) {
      expect(command).toMatch(
        /^umask 077 && sudo -n mkdir -p '[^']+' && sudo -n tee '[^']+'\.tmp >\/dev\/null && sudo -n chmod (600|700) '[^']+'\.tmp && sudo -n mv '[^']+'\.tmp '[^']+'$/,
      );
    }
    // Secrets travel on stdin only, never on a command line.
    const commandLines = server.commands.map((c) => c.command).join('\n');
    for (const secretText of [
      t.settings.internalSecret,
      secret,
      reality.privateKey as string,
      key.privateKey,
      tlsKey,
    ]) {
      expect(commandLines).not.toContain(secretText);
    }

    const actions = (await t.dataSource.query(
      `SELECT action, actor_id FROM audit_log WHERE target_id = $1 ORDER BY created_at`,
      [node.id],
    )) as { action: string; actor_id: string | null }[];
    expect(actions).toEqual([
      { action: 'node.created', actor_id: owner.user.id },
      { action: 'node.provision_started', actor_id: owner.user.id },
      { action: 'node.provisioned', actor_id: null },
    ]);

    // Idempotent on our side: provisioning again runs the same steps and ends ready again.
    await provision(node.id).expect(202);
    await settled();
    expect((await read(node.id)).provision_state).toBe('ready');
  });

  it('the script installs the agent under its own user, supervised, and the core without splice', () => {
    const unit = (name: string): string => {
      const start = SCRIPT.indexOf(`write_unit "\${${name}}" "`);
      expect(start).toBeGreaterThan(0);
      return SCRIPT.slice(start, SCRIPT.indexOf('" && changed=1', start));
    };
    const agent = unit('AGENT_UNIT_FILE');
    for (const line of [
      'User=${AGENT_USER}',
      'EnvironmentFile=${AGENT_CONFIG_DIR}/agent.env',
      'ExecStart=${node_bin} ${AGENT_DIR}/agent.js',
      'Restart=on-failure',
      'StateDirectory=vpn-node-agent',
      'SupplementaryGroups=xray',
      'AmbientCapabilities=CAP_NET_BIND_SERVICE CAP_NET_ADMIN',
    ]) {
      expect(agent.split('\n')).toContain(line);
    }
    expect(SCRIPT).toContain('readonly AGENT_USER="vpn-node-agent"');
    const xray = unit('XRAY_UNIT_FILE');
    expect(xray.split('\n')).toEqual(
      expect.arrayContaining(['Environment=XRAY_BUF_SPLICE=disable', 'RuntimeDirectory=xray']),
    );
    // Node.js 18 or newer, from the distribution when missing; the old proxy settings removed.
    expect(SCRIPT).toContain('readonly NODE_MIN_MAJOR=18');
    expect(SCRIPT).toMatch(/install_packages nodejs/);
    expect(SCRIPT).toMatch(/rm -f "\$\{LEGACY_PROXY_SETTINGS\}"/);
    expect(SCRIPT).toMatch(/install -m 0600 "\$\{STAGING\}\/agent.env"/);
  });

  it('a node made before the agent gets its certificate and secret at provisioning, then routes', async () => {
    const { node, server } = await nodeWithServer();
    await t.dataSource.query(
      `UPDATE nodes SET admission_cert_pem = NULL, admission_cert_sha256 = NULL,
              admission_key_enc = NULL, agent_secret_enc = NULL, agent_secret_sha256 = NULL
        WHERE id = $1`,
      [node.id],
    );
    expect((await read(node.id)).admission_cert_sha256).toBeNull();
    await provision(node.id).expect(202);
    await settled();
    const after = await read(node.id);
    expect(after.provision_state).toBe('ready');
    expect(after.admission_cert_sha256).toMatch(/^[0-9a-f]{64}$/);
    const cert = new X509Certificate(server.uploads.get('/opt/vpn-node/staging/tls.crt')!);
    expect(cert.fingerprint256.replace(/:/g, '').toLowerCase()).toBe(after.admission_cert_sha256);
    expect(server.uploads.get('/opt/vpn-node/staging/agent.env')).toContain(
      `VPN_NODE_SECRET=${await nodeSecret(t, node.id)}`,
    );
    // Provisioning again keeps them: the agent's pinned certificate does not change under clients.
    await provision(node.id).expect(202);
    await settled();
    expect((await read(node.id)).admission_cert_sha256).toBe(after.admission_cert_sha256);
  });

  it('without the agent bundle, provisioning fails before connecting, saying what to do', async () => {
    const { node, server } = await nodeWithServer();
    rmSync(bundle);
    try {
      await provision(node.id).expect(202);
      await settled();
    } finally {
      writeFileSync(bundle, BUNDLE_TEXT);
    }
    const after = await read(node.id);
    expect(after.provision_state).toBe('failed');
    expect(after.last_error).toBe(
      `the node agent bundle ${bundle} is missing: run npm run build (or set NODE_AGENT_BUNDLE)`,
    );
    expect(server.logins).toEqual([]);
  });

  it('a server that fails every command ends failed with a short last_error', async () => {
    const { node, server } = await nodeWithServer({ failAll: true, user: 'root' });
    await provision(node.id).expect(202);
    await settled();
    // Root needs no sudo.
    expect(server.commands[0].command).toMatch(/^umask 077 && mkdir -p '[^']+' && cat > /);
    const after = await read(node.id);
    expect(after.provision_state).toBe('failed');
    expect(after.last_error).toMatch(/failed with exit code 1: step failed on the node/);
    // The step, its target and what to check there.
    expect(after.last_error).toMatch(
      new RegExp(
        `^uploading to root@127\\.0\\.0\\.1:${server.port}: upload of /opt/vpn-node/provision\\.sh ` +
          'failed with exit code 1: step failed on the node; check free space in /opt/vpn-node$',
      ),
    );
    expect((after.last_error as string).length).toBeLessThanOrEqual(300);
    expect(after.last_error).not.toContain(t.settings.internalSecret);
  });

  it('a non-zero exit of the script itself fails the node', async () => {
    const { node, server } = await nodeWithServer({ exitCode: 3 });
    await provision(node.id).expect(202);
    await settled();
    const after = await read(node.id);
    expect(after.provision_state).toBe('failed');
    expect(after.last_error).toMatch(
      new RegExp(
        `^/opt/vpn-node/provision\\.sh on deploy@127\\.0\\.0\\.1:${server.port}: provision\\.sh failed ` +
          'with exit code 3.*; check that the node reaches the internet',
      ),
    );
    expect(server.uploads.size).toBe(6); // uploads went through, the run did not
  });

  it('an SSH port that refuses names the connection and what to check', async () => {
    const { node, server } = await nodeWithServer();
    await server.close();
    await provision(node.id).expect(202);
    await settled();
    const after = await read(node.id);
    expect(after.provision_state).toBe('failed');
    expect(after.last_error).toMatch(
      new RegExp(
        `^SSH to deploy@127\\.0\\.0\\.1:${server.port}: .*ECONNREFUSED.*; check that the port is open ` +
          "to this service and that the node's SSH key is in ~deploy/\\.ssh/authorized_keys$",
      ),
    );
  });

  it('answers 202 within a second even when every step takes 3 s', async () => {
    const { node, server } = await nodeWithServer({ stepDelayMs: 3000 });
    const started = Date.now();
    const response = await provision(node.id);
    expect(response.status).toBe(202);
    expect(Date.now() - started).toBeLessThan(1000);
    expect((await read(node.id)).provision_state).toBe('provisioning');
    await server.close(); // cut it short: the node fails instead of waiting 12 s
    await settled();
    expect((await read(node.id)).provision_state).toBe('failed');
  });

  it('of 5 concurrent provision requests exactly one starts; the others are 409 NODE_BUSY', async () => {
    const { node, server } = await nodeWithServer({ stepDelayMs: 100 });
    const responses = await Promise.all(Array.from({ length: 5 }, () => provision(node.id)));
    const statuses = responses.map((r) => r.status).sort();
    expect(statuses).toEqual([202, 409, 409, 409, 409]);
    for (const r of responses.filter((r) => r.status === 409)) {
      expect(r.body).toMatchObject({ code: 'NODE_BUSY' });
    }
    await settled();
    expect(server.logins).toHaveLength(1);
    expect((await read(node.id)).provision_state).toBe('ready');
  });

  it('a wrong pinned host key fails before any command; the right one provisions', async () => {
    const { node: probe, server } = await nodeWithServer();
    const wrong = `SHA256:${Buffer.alloc(32, 7).toString('base64').replace(/=+$/, '')}`;
    await t
      .http()
      .patch(`/api/v1/admin/nodes/${probe.id}`)
      .set(owner.bearer)
      .send({ ssh_host_key_sha256: wrong })
      .expect(200);
    await provision(probe.id).expect(202);
    await settled();
    const failed = await read(probe.id);
    expect(failed.provision_state).toBe('failed');
    expect(failed.last_error).toContain('host key mismatch');
    expect(failed.ssh_host_key_sha256).toBe(wrong);
    expect(server.commands).toEqual([]);
    expect(server.logins).toEqual([]);

    await t
      .http()
      .patch(`/api/v1/admin/nodes/${probe.id}`)
      .set(owner.bearer)
      .send({ ssh_host_key_sha256: server.fingerprint })
      .expect(200);
    await provision(probe.id).expect(202);
    await settled();
    expect((await read(probe.id)).provision_state).toBe('ready');
  });

  it('the watchdog fails a provisioning that ran past the limit, and the late end does not undo it', async () => {
    const { node, server } = await nodeWithServer({ stepDelayMs: 1500 });
    await provision(node.id).expect(202);
    await t.dataSource.query(
      `UPDATE nodes SET provision_started_at = provision_started_at - interval '11 minutes'
        WHERE id = $1`,
      [node.id],
    );
    const failed = await t.app.get(ProvisioningService).failStale();
    expect(failed).toEqual([node.id]);
    expect(await read(node.id)).toMatchObject({
      provision_state: 'failed',
      last_error: 'provisioning did not finish within 600 s',
    });
    await settled();
    expect((await read(node.id)).provision_state).toBe('failed');
    expect(server.logins).toHaveLength(1);
    // Not busy any more: a new provisioning starts.
    await provision(node.id).expect(202);
    await settled();
  });

  it('restart answers 202 at once and restarts the tunnel over SSH, audited', async () => {
    const { node, server } = await nodeWithServer({ user: 'root' });
    const response = await t
      .http()
      .post(`/api/v1/admin/nodes/${node.id}/restart`)
      .set(owner.bearer);
    expect(response.status).toBe(202);
    await settled();
    expect(server.commands.map((c) => c.command)).toEqual(['systemctl restart xray']);
    const actions = (await t.dataSource.query(
      `SELECT action FROM audit_log WHERE target_id = $1 ORDER BY created_at`,
      [node.id],
    )) as { action: string }[];
    expect(actions.map((a) => a.action)).toEqual([
      'node.created',
      'node.restart_requested',
      'node.restarted',
    ]);
  });

  it('a failed restart is recorded in last_error', async () => {
    const { node } = await nodeWithServer({ exitCode: 5, user: 'root' });
    await t.http().post(`/api/v1/admin/nodes/${node.id}/restart`).set(owner.bearer).expect(202);
    await settled();
    expect((await read(node.id)).last_error).toMatch(/^restart: systemctl restart failed/);
  });
});
