import { execFile } from 'node:child_process';
import { promises as fs } from 'node:fs';
import type { Log } from './log';
import { reason } from './log';

/** A line of the core's access log: `<date> <time> <from> accepted <to> [...] email: <email>`. */
const ACCEPTED = /^\S+ \S+ (?:tcp:|udp:)?(\S+) accepted .* email: (\S+)\s*$/;
/** Addresses remembered per email; a user's older connections beyond this are not found. */
const PER_EMAIL = 256;
/** Sockets named in one `ss -K` call. */
const SS_BATCH = 32;
/** Bytes of the access log read at once. */
const READ_CHUNK = 1 << 20;

/**
 * Finds and closes a session's open connections. Removing a user from the core stops new
 * connections but lets open ones run (and count) on: the core has no API to end them. So the agent
 * reads the core's access log, which names the client address and the email of every accepted
 * connection, and closes those sockets of the core with `ss -K` (the kernel's SOCK_DESTROY; needs
 * CAP_NET_ADMIN). Without an access log nothing is closed, and the agent says so at start.
 */
export class ConnectionCloser {
  private readonly addresses = new Map<string, string[]>();
  private offset = 0;
  private partial = '';
  private reading: Promise<void> | null = null;

  /**
   * `tunnelPort` (when known) limits the sockets closed to the core's side of tunnel connections:
   * without it, another socket of the node whose peer has the same address and port would be closed.
   */
  constructor(
    private readonly accessLog: string,
    private readonly tunnelPort: number,
    private readonly log: Log,
  ) {}

  get enabled(): boolean {
    return this.accessLog !== '';
  }

  /** Starts from the log's current end: connections accepted before the agent started are unknown. */
  async start(): Promise<void> {
    if (!this.enabled) {
      this.log('connections_not_closed', {
        reason: 'CORE_ACCESS_LOG is not set: an ended session keeps its open connections',
      });
      return;
    }
    try {
      this.offset = (await fs.stat(this.accessLog)).size;
    } catch {
      this.offset = 0;
    }
  }

  /** Reads what the core appended to its access log since the last read. */
  catchUp(): Promise<void> {
    if (!this.enabled) return Promise.resolve();
    this.reading ??= this.read().finally(() => {
      this.reading = null;
    });
    return this.reading;
  }

  /** Closes the open connections of `email` that the access log named; answers how many closed. */
  async close(email: string): Promise<number> {
    if (!this.enabled) return 0;
    await this.catchUp();
    const addresses = this.addresses.get(email) ?? [];
    this.addresses.delete(email);
    let closed = 0;
    for (let i = 0; i < addresses.length; i += SS_BATCH) {
      closed += await killSockets(addresses.slice(i, i + SS_BATCH), this.tunnelPort);
    }
    return closed;
  }

  private async read(): Promise<void> {
    let handle: fs.FileHandle;
    try {
      handle = await fs.open(this.accessLog, 'r');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
        this.log('access_log_failed', { error: reason(error) });
      }
      return;
    }
    try {
      const { size } = await handle.stat();
      if (size < this.offset) {
        // Rotated or truncated: start again from its beginning.
        this.offset = 0;
        this.partial = '';
      }
      const buffer = Buffer.alloc(READ_CHUNK);
      while (this.offset < size) {
        const { bytesRead } = await handle.read(buffer, 0, READ_CHUNK, this.offset);
        if (bytesRead === 0) break;
        this.offset += bytesRead;
        const lines = (this.partial + buffer.toString('utf8', 0, bytesRead)).split('\n');
        this.partial = lines.pop() ?? '';
        for (const line of lines) this.remember(line);
      }
    } finally {
      await handle.close();
    }
  }

  private remember(line: string): void {
    const match = ACCEPTED.exec(line);
    if (!match) return;
    const [, address, email] = match;
    let list = this.addresses.get(email);
    if (!list) {
      list = [];
      this.addresses.set(email, list);
    }
    list.push(address);
    if (list.length > PER_EMAIL) list.shift();
  }
}

/**
 * `ss -K` for TCP sockets whose peer is one of `addresses` (`ip:port` or `[ip6]:port`) and, when
 * `localPort` is given, whose own port is that one.
 */
function killSockets(addresses: readonly string[], localPort: number): Promise<number> {
  const filter: string[] = ['('];
  for (const address of addresses) {
    if (filter.length > 1) filter.push('or');
    filter.push('dst', address);
  }
  filter.push(')');
  if (localPort > 0) filter.push('and', 'sport', '=', `:${localPort}`);
  return new Promise((resolve, reject) => {
    execFile('ss', ['-K', '-t', '-n', ...filter], { timeout: 5_000 }, (error, stdout) => {
      if (error) {
        reject(error);
        return;
      }
      // A header line, then one line per socket destroyed.
      resolve(Math.max(0, stdout.trim().split('\n').length - 1));
    });
  });
}
