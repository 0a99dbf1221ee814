import fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ProvisioningService } from '../src/nodes/provisioning.service';
import { type FakeSshServer, sshKeyPair, startFakeSsh } from './fakes/ssh-server';
import { startTestApp, type TestApp } from './harness/app';
import { newUser } from './harness/factories';
import { createNode, waitFor } from './harness/nodes';

/**
 * The SSH private key, the REALITY private key, the agent's TLS key and the node's own secret exist
 * in the clear only on the node: not in any table, not in any answer, not in the log (debug level,
 * every line captured).
 */
describe('nodes: private keys stay secret', () => {
  let t: TestApp;
  let server: FakeSshServer;
  let failing: FakeSshServer;
  const logged: string[] = [];
  let bundleDir: string | undefined;
  const originalWrite = fs.write;
  const originalWriteSync = fs.writeSync;
  const originalStdout = process.stdout.write.bind(process.stdout);

  beforeAll(() => {
    // pino writes to process.stdout, or straight to file descriptor 1 when nothing wrapped
    // stdout; keep a copy of every byte either way.
    const capture = (fd: unknown, data: unknown): void => {
      if ((fd === 1 || fd === 2) && (typeof data === 'string' || Buffer.isBuffer(data))) {
        logged.push(data.toString());
      }
    };
    fs.writeSync = ((fd: number, data: never, ...rest: never[]) => {
      capture(fd, data);
      return originalWriteSync(fd, data, ...rest);
    }) as typeof fs.writeSync;
    // Kept, not echoed: debug lines would flood the test output.
    process.stdout.write = ((chunk: never) => {
      capture(1, chunk);
      return true;
    }) as typeof process.stdout.write;
    fs.write = ((fd: number, data: never, ...rest: never[]) => {
      capture(fd, data);
      return (originalWrite as (...args: unknown[]) => void)(fd, data, ...rest);
    }) as typeof fs.write;
  });
  afterAll(async () => {
    fs.write = originalWrite;
    fs.writeSync = originalWriteSync;
    process.stdout.write = originalStdout;
    await server?.close();
    await failing?.close();
    await t?.close();
    if (bundleDir) fs.rmSync(bundleDir, { recursive: true, force: true });
  });

  it('appear in no table, no answer and no log line', async () => {
    bundleDir = fs.mkdtempSync(join(tmpdir(), 'agent-bundle-'));
    fs.writeFileSync(join(bundleDir, 'agent.js'), '// the node agent\n');
    t = await startTestApp({
      LOG_LEVEL: 'debug',
      NODE_AGENT_BUNDLE: join(bundleDir, 'agent.js'),
    });
    const owner = await newUser(t, 'owner');
    const key = sshKeyPair();
    const answers: string[] = [];
    server = await startFakeSsh({ username: 'root', authorizedKey: key.publicKey });
    failing = await startFakeSsh({ username: 'root', authorizedKey: key.publicKey, failAll: true });

    const node = await createNode(t, owner, {
      ssh_port: server.port,
      ssh_private_key: key.privateKey,
    });
    const broken = await createNode(t, owner, {
      ssh_port: failing.port,
      ssh_private_key: key.privateKey,
    });
    answers.push(JSON.stringify(node), JSON.stringify(broken));
    for (const id of [node.id, broken.id]) {
      answers.push(
        (await t.http().post(`/api/v1/admin/nodes/${id}/provision`).set(owner.bearer)).text,
      );
      await t.app.get(ProvisioningService).idle();
      answers.push(
        (await t.http().post(`/api/v1/admin/nodes/${id}/restart`).set(owner.bearer)).text,
      );
      await t.app.get(ProvisioningService).idle();
      answers.push((await t.http().get(`/api/v1/admin/nodes/${id}`).set(owner.bearer)).text);
    }
    // A PATCH replacing the key, and a refused one that echoes nothing back.
    answers.push(
      (
        await t
          .http()
          .patch(`/api/v1/admin/nodes/${node.id}`)
          .set(owner.bearer)
          .send({ ssh_private_key: key.privateKey })
      ).text,
      (
        await t
          .http()
          .patch(`/api/v1/admin/nodes/${node.id}`)
          .set(owner.bearer)
          .send({ ssh_private_key: key.privateKey, public_key: 'x' })
      ).text,
    );
    answers.push((await t.http().get('/api/v1/admin/nodes').set(owner.bearer)).text);
    answers.push((await t.http().get('/api/v1/admin/audit').set(owner.bearer)).text);

    const config = JSON.parse(server.uploads.get('/opt/vpn-node/staging/xray-config.json')!) as {
      inbounds: { streamSettings: { realitySettings: { privateKey: string } } }[];
    };
    const realityKey = config.inbounds[0].streamSettings.realitySettings.privateKey;
    expect(realityKey).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // A distinctive line of the SSH key's body (the PEM markers alone prove nothing).
    const sshKeyLine = key.privateKey.split('\n')[2];
    expect(sshKeyLine.length).toBeGreaterThan(40);
    const tlsKey = server.uploads.get('/opt/vpn-node/staging/tls.key')!;
    const tlsKeyLine = tlsKey.split('\n')[1];
    expect(tlsKeyLine.length).toBeGreaterThan(40);
    const nodeSecret = /^VPN_NODE_SECRET=(.+)$/m.exec(
      server.uploads.get('/opt/vpn-node/staging/agent.env')!,
    )![1];
    expect(nodeSecret).toMatch(/^[A-Za-z0-9_-]{43}$/);

    const tables = (await t.dataSource.query(
      `SELECT tablename FROM pg_tables WHERE schemaname = 'public'`,
    )) as { tablename: string }[];
    let database = '';
    for (const { tablename } of tables) {
      const rows = (await t.dataSource.query(
        `SELECT string_agg(x::text, E'\\n') AS dump FROM "${tablename}" x`,
      )) as { dump: string | null }[];
      database += rows[0].dump ?? '';
    }
    // The log goes out in chunks, at the latest 100 ms after a line (`BUFFERED_OUTPUT`).
    await waitFor(
      async () => {
        const log = logged.join('');
        return log.includes('node restart failed') && log.includes('"url":"/api/v1/admin/audit"');
      },
      5_000,
      "the restart's failure and the last request's line in the log",
    );
    const log = logged.join('');
    expect(log.length).toBeGreaterThan(0); // the capture works: request lines were logged
    // Each failure is logged, one line naming the node, beside last_error and the audit log.
    const failures = log
      .split('\n')
      .filter((line) => line.includes(broken.id) && /node (provisioning|restart) failed/.test(line))
      .map((line) => JSON.parse(line) as { node_id: string; error: string; msg: string });
    expect(failures).toEqual([
      expect.objectContaining({ msg: 'node provisioning failed', error: expect.any(String) }),
      expect.objectContaining({ msg: 'node restart failed', error: expect.any(String) }),
    ]);
    expect(database).toContain(node.id);
    for (const [where, text] of [
      ['database', database],
      ['answers', answers.join('\n')],
      ['log', log],
    ]) {
      expect({ where, ssh: text.includes(sshKeyLine) }).toEqual({ where, ssh: false });
      expect({ where, reality: text.includes(realityKey) }).toEqual({ where, reality: false });
      expect({ where, tls: text.includes(tlsKeyLine) }).toEqual({ where, tls: false });
      expect({ where, node: text.includes(nodeSecret) }).toEqual({ where, node: false });
      expect({ where, pem: text.includes('PRIVATE KEY') }).toEqual({ where, pem: false });
    }
  });
});
