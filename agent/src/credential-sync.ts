import type { Credentials } from './credentials';
import { reason, type Log } from './log';
import { ServiceUnavailable, type ServiceClient } from './service-client';

/** Tries of one fetch before it waits for the next poll or nudge. */
const FETCH_ATTEMPTS = 4;
const RETRY_BASE_MS = 500;
const RETRY_MAX_MS = 8_000;

/**
 * Fetches this node's credentials from the service (`since` the version last applied) and applies
 * them: every CREDENTIALS_POLL_S, and at once when the service nudges. Fetches are coalesced: at
 * most one runs, and requests meanwhile make at most one more after it. A service that cannot be
 * reached leaves the set as it is (the node keeps serving it).
 */
export class CredentialSync {
  private running: Promise<void> | null = null;
  private again = false;
  private stopped = false;
  private wake: (() => void) | null = null;

  constructor(
    private readonly credentials: Credentials,
    private readonly service: ServiceClient,
    private readonly log: Log,
  ) {}

  /** The service says version `version` exists: fetch it unless it is already applied. */
  nudged(version: number): void {
    if (version <= this.credentials.version) return;
    this.log('credentials_nudged', { version, have: this.credentials.version });
    void this.request();
  }

  /** A fetch now, or right after the running one; resolves when the fetches so asked for ended. */
  request(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = this.run().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  /** Stops retrying and waits for the running fetch. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    await this.running;
  }

  private async run(): Promise<void> {
    do {
      this.again = false;
      await this.fetchOnce().catch((error: unknown) =>
        this.log('credentials_sync_failed', { error: reason(error) }),
      );
    } while (this.again && !this.stopped);
  }

  private async fetchOnce(): Promise<void> {
    for (let attempt = 1; !this.stopped; attempt += 1) {
      const since = this.credentials.version;
      const started = process.hrtime.bigint();
      let changes;
      try {
        changes = await this.service.credentials(since);
      } catch (error) {
        if (!(error instanceof ServiceUnavailable)) throw error;
        this.log('credentials_fetch_failed', { since, attempt, error: error.message });
        if (attempt >= FETCH_ATTEMPTS) return;
        const wait = Math.min(RETRY_MAX_MS, RETRY_BASE_MS * 2 ** (attempt - 1));
        await this.sleep(wait * (0.5 + Math.random() / 2));
        continue;
      }
      const fetchedMs = Number(process.hrtime.bigint() - started) / 1e6;
      try {
        const { added, removed } = await this.credentials.apply(changes);
        if (added > 0 || removed > 0 || changes.version !== since) {
          this.log('credentials_synced', {
            since,
            version: changes.version,
            full: changes.full,
            devices: this.credentials.size,
            added,
            removed,
            fetch_ms: fetchedMs,
            ms: Number(process.hrtime.bigint() - started) / 1e6,
          });
        }
      } catch (error) {
        // In the journal already; the core gets the whole set again by the core watch.
        this.log('credentials_apply_failed', { version: changes.version, error: reason(error) });
      }
      return;
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.wake = done;
    });
  }
}
