import type { AddressInfo } from 'node:net';
import { type AuthContext, type Connection, type ParsedKey, Server, utils } from 'ssh2';
import { hostKeyFingerprint } from '../../src/nodes/node-shell';

/** One exec request the node received, with what came on its stdin. */
export interface ReceivedCommand {
  command: string;
  stdin: string;
}

export interface FakeSshOptions {
  /** The only user allowed in, with the only key. */
  username: string;
  /** OpenSSH public key text of the client key allowed in. */
  authorizedKey: string;
  /** Exit code of every command other than an upload (default 0). */
  exitCode?: number;
  /** Also fail uploads. */
  failAll?: boolean;
  /** Delay before answering each command, ms. */
  stepDelayMs?: number;
}

export interface FakeSshServer {
  port: number;
  /** `SHA256:…` of this server's ed25519 host key. */
  fingerprint: string;
  commands: ReceivedCommand[];
  /** Files written through `cat > path` (the service's uploads), by path. */
  uploads: Map<string, string>;
  /** Usernames that authenticated. */
  logins: string[];
  close(): Promise<void>;
}

/** An upload's write step: `cat > 'path'.tmp` as root, `sudo -n tee 'path'.tmp` otherwise. */
const UPLOAD = /(?:cat > |tee )'([^']+)'\.tmp/;

/** A generated ed25519 key pair in OpenSSH format. */
export function sshKeyPair(): { privateKey: string; publicKey: string } {
  // ssh2's generator drops a leading zero byte of the public key about once in 400 keys, and the
  // result does not parse (not even by ssh2 itself): such a key is drawn again.
  for (;;) {
    const pair = utils.generateKeyPairSync('ed25519');
    if (!(utils.parseKey(pair.private) instanceof Error)) {
      return { privateKey: pair.private, publicKey: pair.public };
    }
  }
}

/**
 * A real SSH server on 127.0.0.1 (ed25519 host key, public-key authentication, exec with stdin)
 * that records what a node would receive: commands, and files uploaded through stdin.
 */
export async function startFakeSsh(options: FakeSshOptions): Promise<FakeSshServer> {
  const hostKey = sshKeyPair();
  const parsedHost = utils.parseKey(hostKey.privateKey) as ParsedKey;
  const allowed = utils.parseKey(options.authorizedKey) as ParsedKey;
  const commands: ReceivedCommand[] = [];
  const uploads = new Map<string, string>();
  const logins: string[] = [];
  const connections = new Set<Connection>();

  const server = new Server({ hostKeys: [hostKey.privateKey] }, (client) => {
    connections.add(client);
    client.on('close', () => connections.delete(client));
    client.on('error', () => undefined);
    client.on('authentication', (ctx: AuthContext) => {
      if (ctx.method !== 'publickey' || ctx.username !== options.username) return ctx.reject();
      const sameKey = ctx.key.algo === allowed.type && ctx.key.data.equals(allowed.getPublicSSH());
      if (!sameKey) return ctx.reject();
      if (!ctx.signature) return ctx.accept(); // the key check before the signed attempt
      if (!allowed.verify(ctx.blob!, ctx.signature, ctx.hashAlgo)) return ctx.reject();
      logins.push(ctx.username);
      ctx.accept();
    });
    client.on('ready', () => {
      client.on('session', (acceptSession) => {
        const session = acceptSession();
        session.on('exec', (accept, _reject, info) => {
          const stream = accept();
          const upload = UPLOAD.exec(info.command);
          const chunks: Buffer[] = [];
          const answer = (): void => {
            const stdin = Buffer.concat(chunks).toString('utf8');
            commands.push({ command: info.command, stdin });
            const failed = options.failAll || (!upload && (options.exitCode ?? 0) !== 0);
            if (upload && !failed) uploads.set(upload[1], stdin);
            setTimeout(() => {
              if (failed) stream.stderr.write('step failed on the node\n');
              else stream.write('ok\n');
              stream.exit(failed ? (options.exitCode ?? 1) || 1 : 0);
              stream.end();
            }, options.stepDelayMs ?? 0);
          };
          stream.on('data', (chunk: Buffer) => chunks.push(chunk));
          // Uploads carry their file on stdin: answer once it has all arrived.
          if (upload) stream.once('end', answer);
          else answer();
        });
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    fingerprint: hostKeyFingerprint(parsedHost.getPublicSSH()),
    commands,
    uploads,
    logins,
    close: () =>
      new Promise<void>((resolve) => {
        for (const connection of connections) connection.end();
        server.close(() => resolve());
      }),
  };
}
