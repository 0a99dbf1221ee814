import type { OnlineDevice } from './addresses';
import type { ConnectionCloser } from './connections';
import { CoreRefused, type CoreClient } from './core-client';
import { deviceEmail, emailSafeId } from './emails';
import type { DeviceCredential, Journal, JournalState } from './journal';
import { reason, type Log } from './log';
import { eachLimited } from './pool';
import type { CredentialChanges, WireCredential } from './service-client';

/** Core calls in flight at once: 8,000 devices apply in well under 2 s without flooding the core. */
export const CORE_CONCURRENCY = 48;
/** The expiry timer is set at most this far ahead (setTimeout's range; clocks also drift). */
const EXPIRY_CHECK_MAX_MS = 3_600_000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const credentialEmail = (device: DeviceCredential): string =>
  deviceEmail(device.userId, device.deviceId);

/**
 * This node's device credentials: one core user each. The set lives in the journal, which is
 * written before the core is told (a removal first goes to `ending`, so a crash finishes it at the
 * next start); the core gets the changes in batches, removals before additions (a changed VLESS id
 * is a removal and an addition of the same email). A device leaves by itself at its `expires_at`.
 * Changes run one at a time.
 */
export class Credentials {
  private queue: Promise<unknown> = Promise.resolve();
  private byId: Map<string, DeviceCredential>;
  private expiryTimer: NodeJS.Timeout | null = null;
  private stopped = false;
  /** A core call failed: the core may lack part of the set until it is applied again whole. */
  private stale = false;

  constructor(
    private readonly state: JournalState,
    private readonly journal: Journal,
    private readonly core: CoreClient,
    private readonly connections: ConnectionCloser,
    private readonly flow: string,
    private readonly log: Log,
    private readonly now: () => number = Date.now,
  ) {
    this.byId = new Map(state.credentials.devices.map((device) => [device.deviceId, device]));
  }

  /** The service's version of the set last applied (0: none yet). */
  get version(): number {
    return this.state.credentials.version;
  }

  get size(): number {
    return this.byId.size;
  }

  /** Whether the core may lack part of the set (a core call failed since it was last applied). */
  get needsRepair(): boolean {
    return this.stale;
  }

  /** Applies an answer of `GET /internal/credentials`; answers what changed in the core. */
  apply(changes: CredentialChanges): Promise<{ added: number; removed: number }> {
    return this.serially(async () => {
      const now = this.now();
      const next = changes.full ? new Map<string, DeviceCredential>() : new Map(this.byId);
      for (const deviceId of changes.remove) next.delete(deviceId);
      let refused = 0;
      for (const wire of changes.upsert) {
        const device = fromWire(wire);
        if (!device) {
          refused += 1;
          continue;
        }
        if (device.expiresAt !== null && device.expiresAt <= now) next.delete(device.deviceId);
        else next.set(device.deviceId, device);
      }
      if (refused > 0) this.log('credentials_refused', { devices: refused });
      const removed: string[] = [];
      const added: DeviceCredential[] = [];
      for (const [deviceId, old] of this.byId) {
        const current = next.get(deviceId);
        if (
          !current ||
          credentialEmail(current) !== credentialEmail(old) ||
          current.vlessId !== old.vlessId
        ) {
          removed.push(credentialEmail(old));
        }
      }
      for (const [deviceId, device] of next) {
        const old = this.byId.get(deviceId);
        if (
          !old ||
          credentialEmail(old) !== credentialEmail(device) ||
          old.vlessId !== device.vlessId
        ) {
          added.push(device);
        }
      }
      const expiryMoved = [...next.values()].some(
        (device) => this.byId.get(device.deviceId)?.expiresAt !== device.expiresAt,
      );
      if (
        removed.length === 0 &&
        added.length === 0 &&
        !expiryMoved &&
        changes.version === this.version
      ) {
        return { added: 0, removed: 0 };
      }
      this.byId = next;
      this.state.credentials.devices = [...next.values()];
      this.state.credentials.version = changes.version;
      this.state.credentials.ending.push(...removed);
      await this.journal.commit();
      this.armExpiry();
      await this.finishEnding();
      await this.addAll(added);
      return { added: added.length, removed: removed.length };
    });
  }

  /**
   * Puts the whole set into the core (at start, after the core restarted, after a failed core
   * call): endings first, then every device (those the core has already are refused and left).
   */
  restore(): Promise<{ devices: number; added: number; ms: number }> {
    return this.serially(async () => {
      const started = process.hrtime.bigint();
      this.stale = false;
      await this.finishEnding();
      const added = await this.addAll([...this.byId.values()]);
      this.armExpiry();
      const result = {
        devices: this.byId.size,
        added,
        ms: Number(process.hrtime.bigint() - started) / 1e6,
      };
      this.log('credentials_restored', result);
      return result;
    });
  }

  /** The devices with an open connection on this node, for a traffic report. */
  online(): Promise<OnlineDevice[] | undefined> {
    return this.connections.online();
  }

  /** Closes the open connections of these users' devices (their credentials stay). */
  async closeUsers(userIds: Iterable<string>, cause: string): Promise<void> {
    const users = new Set(userIds);
    const emails = [...this.byId.values()]
      .filter((device) => users.has(device.userId))
      .map(credentialEmail);
    await this.closeEmails(emails, cause);
  }

  /** Closes the open connections of these devices here (their credentials stay). */
  async closeDevices(deviceIds: readonly string[], cause: string): Promise<void> {
    const ids = new Set(deviceIds);
    const emails = new Set(this.connections.devices.emailsOf(ids));
    for (const id of ids) {
      const device = this.byId.get(id);
      if (device) emails.add(credentialEmail(device));
    }
    await this.closeEmails([...emails], cause);
  }

  stop(): void {
    this.stopped = true;
    if (this.expiryTimer) clearTimeout(this.expiryTimer);
    this.expiryTimer = null;
  }

  /** Removes the devices whose `expires_at` has come, and closes their connections. */
  private expire(): Promise<void> {
    return this.serially(async () => {
      const now = this.now();
      const expired = [...this.byId.values()].filter(
        (device) => device.expiresAt !== null && device.expiresAt <= now,
      );
      if (expired.length > 0) {
        for (const device of expired) this.byId.delete(device.deviceId);
        this.state.credentials.devices = [...this.byId.values()];
        this.state.credentials.ending.push(...expired.map(credentialEmail));
        await this.journal.commit();
        await this.finishEnding();
        for (const device of expired) {
          this.log('credential_expired', { device_id: device.deviceId, user_id: device.userId });
        }
      }
      this.armExpiry();
    });
  }

  /** Sets the timer for the earliest `expires_at` of the set. */
  private armExpiry(): void {
    if (this.expiryTimer) clearTimeout(this.expiryTimer);
    this.expiryTimer = null;
    if (this.stopped) return;
    let earliest = Infinity;
    for (const device of this.byId.values()) {
      if (device.expiresAt !== null && device.expiresAt < earliest) earliest = device.expiresAt;
    }
    if (earliest === Infinity) return;
    const wait = Math.min(EXPIRY_CHECK_MAX_MS, Math.max(0, earliest - this.now()));
    this.expiryTimer = setTimeout(() => {
      this.expiryTimer = null;
      this.expire().catch((error: unknown) => {
        this.log('credentials_expiry_failed', { error: reason(error) });
        // The core could not be told: try again in a while rather than never.
        this.retryLater();
      });
    }, wait);
  }

  private retryLater(): void {
    if (this.stopped || this.expiryTimer) return;
    this.expiryTimer = setTimeout(() => {
      this.expiryTimer = null;
      this.expire().catch(() => this.retryLater());
    }, 5_000);
  }

  /** Adds devices to the core; answers how many the core did not have. */
  private async addAll(devices: readonly DeviceCredential[]): Promise<number> {
    let added = 0;
    const failed = await eachLimited(devices, CORE_CONCURRENCY, async (device) => {
      try {
        await this.core.addUser(credentialEmail(device), device.vlessId, this.flow);
        added += 1;
      } catch (error) {
        if (!(error instanceof CoreRefused)) throw error;
      }
    });
    if (failed.length > 0) {
      this.stale = true;
      throw new Error(
        `${failed.length} of ${devices.length} devices not added: ${reason(failed[0])}`,
      );
    }
    return added;
  }

  /** Removes the `ending` emails from the core and closes their connections. */
  private async finishEnding(): Promise<void> {
    const ending = this.state.credentials.ending;
    if (ending.length === 0) return;
    const failed = await eachLimited([...new Set(ending)], CORE_CONCURRENCY, async (email) => {
      try {
        await this.core.removeUser(email);
      } catch (error) {
        if (!(error instanceof CoreRefused)) throw error;
      }
    });
    if (failed.length > 0) {
      this.stale = true;
      throw new Error(`${failed.length} devices not removed: ${reason(failed[0])}`);
    }
    await this.closeEmails(ending, 'removed');
    this.state.credentials.ending = [];
    await this.journal.commit();
  }

  /** Closes connections and logs; a failure to close is logged, never thrown. */
  private async closeEmails(emails: readonly string[], cause: string): Promise<void> {
    if (emails.length === 0) return;
    try {
      const closed = await this.connections.closeMany(emails);
      if (closed > 0) {
        this.log('device_connections_closed', {
          devices: emails.length,
          connections: closed,
          cause,
        });
      }
    } catch (error) {
      this.log('connections_close_failed', { devices: emails.length, error: reason(error) });
    }
  }

  private serially<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(work, work);
    this.queue = run.catch(() => undefined);
    return run;
  }
}

/** A credential from the service, or null when its ids could not make a readable email. */
function fromWire(wire: WireCredential): DeviceCredential | null {
  if (!emailSafeId(wire.device_id) || !emailSafeId(wire.user_id) || !UUID.test(wire.vless_id)) {
    return null;
  }
  let expiresAt: number | null = null;
  if (wire.expires_at !== null) {
    expiresAt = Date.parse(wire.expires_at);
    if (Number.isNaN(expiresAt)) return null;
  }
  return {
    deviceId: wire.device_id,
    userId: wire.user_id,
    vlessId: wire.vless_id,
    expiresAt,
  };
}
