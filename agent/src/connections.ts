import { execFile } from 'node:child_process';
import { promises as fs } from 'node:fs';
import { DeviceAddresses, normalEndpoint, type OnlineDevice } from './addresses';
import { parseEmail } from './emails';
import type { Log } from './log';
import { reason } from './log';

/**
 * A line of the core's access log: `<date> <time> [from ]<client> accepted <to> [...] email: <email>`
 * (Xray writes `from` since 1.8; V2Ray 4.x does not).
 */
const ACCEPTED = /^\S+ \S+ (?:from )?(?:tcp:|udp:)?(\S+) accepted .* email: (\S+)\s*$/;
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
  /** Where each device connects from: the one-address rule. */
  readonly devices = new DeviceAddresses();
  /** Connections of devices' old addresses, found by the last read and not closed yet. */
  private stale: { email: string; endpoints: string[] }[] = [];
  private offset = 0;
  private partial = '';
  private reading: Promise<void> | null = null;

  /**
   * `tunnelPort` (when known) limits the sockets closed to the core's side of tunnel connections:
   * without it, another socket of the node whose peer has the same address and port would be closed.
   * `kill` and `established` are the seams to the kernel's sockets (`ss`).
   */
  constructor(
    private readonly accessLog: string,
    private readonly tunnelPort: number,
    private readonly log: Log,
    private readonly kill: typeof killSockets = killSockets,
    private readonly established: typeof establishedPeers = establishedPeers,
    private readonly now: () => number = Date.now,
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

  /**
   * Reads what the core appended to its access log since the last read, and closes the connections
   * of devices that came from a new address.
   */
  catchUp(): Promise<void> {
    if (!this.enabled) return Promise.resolve();
    this.reading ??= this.read()
      .then(() => this.closeStale())
      .finally(() => {
        this.reading = null;
      });
    return this.reading;
  }

  /** Closes the open connections of `email` that the access log named; answers how many closed. */
  close(email: string): Promise<number> {
    return this.closeMany([email]);
  }

  /** Closes the open connections of these emails; answers how many closed. */
  async closeMany(emails: readonly string[]): Promise<number> {
    if (!this.enabled || emails.length === 0) return 0;
    await this.catchUp();
    const endpoints: string[] = [];
    for (const email of emails) {
      endpoints.push(...(this.addresses.get(email) ?? []));
      this.addresses.delete(email);
      this.devices.forget(email);
    }
    return this.killAll(endpoints);
  }

  /** The devices with an open connection now (undefined without an access log: not known). */
  async online(): Promise<OnlineDevice[] | undefined> {
    if (!this.enabled) return undefined;
    await this.catchUp();
    let open: Set<string> | null = null;
    try {
      open = await this.established(this.tunnelPort);
    } catch (error) {
      this.log('connections_list_failed', { error: reason(error) });
    }
    return this.devices.online(open, this.now());
  }

  private async killAll(endpoints: readonly string[]): Promise<number> {
    let closed = 0;
    for (let i = 0; i < endpoints.length; i += SS_BATCH) {
      closed += await this.kill(endpoints.slice(i, i + SS_BATCH), this.tunnelPort);
    }
    return closed;
  }

  private async closeStale(): Promise<void> {
    const stale = this.stale;
    this.stale = [];
    for (const { email, endpoints } of stale) {
      const owner = parseEmail(email);
      let closed = 0;
      try {
        closed = await this.killAll(endpoints);
      } catch (error) {
        this.log('connections_close_failed', { email, error: reason(error) });
      }
      // The address itself is not logged: addresses stay in memory only.
      this.log('device_address_switched', {
        device_id: owner?.deviceId,
        user_id: owner?.userId,
        connections_closed: closed,
        switches: this.devices.switches,
      });
    }
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
    const { switched, stale } = this.devices.seen(email, address, this.now());
    if (!switched) return;
    const old = new Set(stale);
    this.addresses.set(
      email,
      list.filter((each) => !old.has(each)),
    );
    this.stale.push({ email, endpoints: stale });
  }
}

/**
 * The peers (`ip:port`) of the node's established TCP connections, of those on `localPort` when it
 * is given: which of the connections the access log named are still open.
 */
export function establishedPeers(localPort: number): Promise<Set<string>> {
  const filter = localPort > 0 ? ['(', 'sport', '=', `:${localPort}`, ')'] : [];
  return new Promise((resolve, reject) => {
    execFile(
      'ss',
      ['-t', '-n', '-H', 'state', 'established', ...filter],
      { timeout: 5_000, maxBuffer: 64 << 20 },
      (error, stdout) => {
        if (error) {
          reject(error);
          return;
        }
        // Without a State column: Recv-Q, Send-Q, local address, peer address.
        const peers = new Set<string>();
        for (const line of stdout.split('\n')) {
          const peer = line.trim().split(/\s+/)[3];
          if (peer) peers.add(normalEndpoint(peer));
        }
        resolve(peers);
      },
    );
  });
}

/**
 * `ss -K` for TCP sockets whose peer is one of `addresses` (`ip:port` or `[ip6]:port`) and, when
 * `localPort` is given, whose own port is that one.
 */
export function killSockets(addresses: readonly string[], localPort: number): Promise<number> {
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
