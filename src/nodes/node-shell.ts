import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { NodeSSH } from 'node-ssh';

export interface ShellTarget {
  host: string;
  port: number;
  username: string;
  privateKey: string;
  /** `SHA256:<base64>`; null accepts the first key seen (then the caller records it). */
  hostKeySha256: string | null;
}

export interface CommandResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** One signed-in connection to a node. */
export interface ShellSession {
  /** The fingerprint of the host key this connection was made with. */
  readonly hostKeySha256: string;
  /** Runs a command; `stdin` carries anything secret, never the command line. */
  run(command: string, stdin?: string): Promise<CommandResult>;
  /** Writes a file through stdin (`cat >`), created with `mode` before any byte lands. */
  upload(path: string, content: string, mode: '600' | '700' | '644'): Promise<void>;
  close(): void;
}

export class HostKeyMismatchError extends Error {
  constructor(readonly seen: string) {
    super('the host key does not match the pinned ssh_host_key_sha256');
  }
}

export class CommandFailedError extends Error {
  constructor(
    readonly step: string,
    readonly result: CommandResult,
  ) {
    super(`${step} failed with exit code ${String(result.code)}`);
  }
}

/** The OpenSSH fingerprint form of a raw host key: `SHA256:` and unpadded base64. */
export function hostKeyFingerprint(key: Buffer): string {
  return `SHA256:${createHash('sha256').update(key).digest('base64').replace(/=+$/, '')}`;
}

/** The prefix that runs a command as root: none for root itself, else sudo without a prompt. */
export function asRoot(username: string): string {
  return username === 'root' ? '' : 'sudo -n ';
}

/** A single-quoted shell word. */
export function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/**
 * The seam to the nodes' SSH servers: connect (with the host-key check inside), run, upload.
 * Tests point nodes at a real ssh2 server of their own; production uses `SshNodeShell`.
 */
export abstract class NodeShell {
  abstract connect(target: ShellTarget): Promise<ShellSession>;
}

@Injectable()
export class SshNodeShell extends NodeShell {
  async connect(target: ShellTarget): Promise<ShellSession> {
    const ssh = new NodeSSH();
    let seen: string | null = null;
    try {
      await ssh.connect({
        host: target.host,
        port: target.port,
        username: target.username,
        privateKey: target.privateKey,
        readyTimeout: 20_000,
        // Checked before authentication, so a wrong host never sees a command or a secret.
        hostVerifier: (key: Buffer) => {
          seen = hostKeyFingerprint(key);
          return target.hostKeySha256 === null || seen === target.hostKeySha256;
        },
      });
    } catch (error) {
      ssh.dispose();
      if (seen !== null && target.hostKeySha256 !== null && seen !== target.hostKeySha256) {
        throw new HostKeyMismatchError(seen);
      }
      throw error;
    }
    return new SshSession(ssh, seen!, asRoot(target.username));
  }
}

class SshSession implements ShellSession {
  constructor(
    private readonly ssh: NodeSSH,
    readonly hostKeySha256: string,
    /** Every step of an upload runs as root: the files live in root's folders. */
    private readonly root: string,
  ) {}

  async run(command: string, stdin?: string): Promise<CommandResult> {
    const result = await this.ssh.execCommand(command, { stdin });
    return { code: result.code, stdout: result.stdout, stderr: result.stderr };
  }

  async upload(path: string, content: string, mode: '600' | '700' | '644'): Promise<void> {
    const dir = path.slice(0, path.lastIndexOf('/')) || '/';
    const target = shellQuote(path);
    const sudo = this.root;
    // sudo keeps the caller's umask (joined with its own), so the file is 0600 from its creation.
    const write = sudo ? `${sudo}tee ${target}.tmp >/dev/null` : `cat > ${target}.tmp`;
    const result = await this.run(
      `umask 077 && ${sudo}mkdir -p ${shellQuote(dir)} && ${write} && ` +
        `${sudo}chmod ${mode} ${target}.tmp && ${sudo}mv ${target}.tmp ${target}`,
      content,
    );
    if (result.code !== 0) throw new CommandFailedError(`upload of ${path}`, result);
  }

  close(): void {
    this.ssh.dispose();
  }
}
