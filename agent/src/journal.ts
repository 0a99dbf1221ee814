import { promises as fs } from 'node:fs';
import * as path from 'node:path';

/** One admitted session: one core user. */
export interface Session {
  /** `<user id>.<slot>`: the core user's email, which names its counters. */
  email: string;
  userId: string;
  slot: number;
  vlessId: string;
  createdAt: number;
  /** When its counters last moved (or it was admitted), in ms. */
  lastActiveAt: number;
}

/** One device credential of this node: one core user, `<user id>.d.<device id>`. */
export interface DeviceCredential {
  deviceId: string;
  userId: string;
  vlessId: string;
  /** When the agent removes it by itself (ms since the epoch), or null for never. */
  expiresAt: number | null;
}

/** The node's set of device credentials as last applied, with the service's version of it. */
export interface CredentialState {
  version: number;
  devices: DeviceCredential[];
  /** Emails whose removal from the core (and whose connections' closing) may not have finished. */
  ending: string[];
}

export interface DeviceTraffic {
  device_id: string;
  bytes_up: number;
  bytes_down: number;
}

export interface TrafficEntry {
  user_id: string;
  bytes_up: number;
  bytes_down: number;
  /** The share of the user's bytes that the user's devices carried (sessions carry the rest). */
  devices?: DeviceTraffic[];
}

export interface Report {
  report_id: string;
  entries: TrafficEntry[];
}

/** Counter values by email: [uplink, downlink]. */
export type CounterValues = Record<string, [number, number]>;

/**
 * Everything the agent must not forget, written before every send and every answer that depends on
 * it. A report is `pending` from the moment it is written until the service answered 2xx to every
 * part of it; only then do its counter values become `last`.
 */
export interface JournalState {
  version: 1;
  sessions: Session[];
  /** Emails whose removal from the core (and whose connections' closing) may not have finished. */
  ending: string[];
  /** The counter values the last acknowledged report was computed up to. */
  last: CounterValues;
  /** When the core that produced `last` started (ms since the epoch), or null before any read. */
  coreStartedAt: number | null;
  pending: { reports: Report[]; next: CounterValues; coreStartedAt: number } | null;
  /** Absent in journals written before devices existed: read as an empty set of version 0. */
  credentials: CredentialState;
}

export function emptyCredentials(): CredentialState {
  return { version: 0, devices: [], ending: [] };
}

export function emptyJournal(): JournalState {
  return {
    version: 1,
    sessions: [],
    ending: [],
    last: {},
    coreStartedAt: null,
    pending: null,
    credentials: emptyCredentials(),
  };
}

export const JOURNAL_FILE = 'journal.json';

/**
 * The journal file: each write goes to a temporary file that is fsynced, renamed over the journal
 * and the folder fsynced, so a crash leaves either the old or the new journal whole. Writes asked
 * for while one runs are made together by the next one.
 */
export class Journal {
  private readonly file: string;
  private writing: Promise<void> | null = null;
  private queued: Promise<void> | null = null;

  constructor(
    private readonly dir: string,
    private readonly state: () => JournalState,
  ) {
    this.file = path.join(dir, JOURNAL_FILE);
  }

  static async read(dir: string): Promise<JournalState> {
    await fs.mkdir(dir, { recursive: true, mode: 0o700 });
    let text: string;
    try {
      text = await fs.readFile(path.join(dir, JOURNAL_FILE), 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return emptyJournal();
      throw error;
    }
    const state = JSON.parse(text) as Partial<JournalState>;
    if (state.version !== 1) throw new Error(`unknown journal version ${String(state.version)}`);
    return { ...emptyJournal(), ...state };
  }

  /** Resolves once the state as it is now (or later) is on disk. */
  commit(): Promise<void> {
    if (!this.writing) {
      this.writing = this.write().finally(() => {
        this.writing = null;
      });
      return this.writing;
    }
    this.queued ??= this.writing
      .catch(() => undefined)
      .then(() => {
        this.queued = null;
        return this.commit();
      });
    return this.queued;
  }

  private async write(): Promise<void> {
    const text = JSON.stringify(this.state());
    const temporary = `${this.file}.tmp`;
    const handle = await fs.open(temporary, 'w', 0o600);
    try {
      await handle.writeFile(text);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await fs.rename(temporary, this.file);
    const folder = await fs.open(this.dir, 'r');
    try {
      await folder.sync();
    } finally {
      await folder.close();
    }
  }
}
