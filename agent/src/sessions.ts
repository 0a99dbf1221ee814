import { randomUUID } from 'node:crypto';
import type { ConnectionCloser } from './connections';
import { CoreRefused, type CoreClient } from './core-client';
import { sessionEmail } from './emails';
import type { Journal, JournalState, Session } from './journal';
import { reason, type Log } from './log';
import { eachLimited } from './pool';

export { emailUser, sessionEmail } from './emails';

export type EndCause = 'idle' | 'over_limit' | 'inactive' | 'replaced';

/** Core calls in flight at once when every session is put back into the core. */
const RESTORE_CONCURRENCY = 32;

/**
 * The sessions of this node: one core user each, at most `maxPerUser` per user in slots that are
 * reused. Every change is written to the journal before the core is told, so that a crash at any
 * point leaves the journal naming every core user the agent made. Changes run one at a time.
 */
export class Sessions {
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly state: JournalState,
    private readonly journal: Journal,
    private readonly core: CoreClient,
    private readonly connections: ConnectionCloser,
    private readonly settings: { maxSessionsPerUser: number; flow: string },
    private readonly log: Log,
    private readonly now: () => number = Date.now,
  ) {}

  get live(): readonly Session[] {
    return this.state.sessions;
  }

  /** A new session for the user, in a free slot or in the slot of its oldest session (ended). */
  admit(userId: string): Promise<Session> {
    return this.serially(async () => {
      const own = this.state.sessions.filter((session) => session.userId === userId);
      let slot = 0;
      if (own.length >= this.settings.maxSessionsPerUser) {
        const oldest = own.reduce((a, b) => (b.createdAt < a.createdAt ? b : a));
        slot = oldest.slot;
        await this.endNow([oldest.email], 'replaced');
      } else {
        const taken = new Set(own.map((session) => session.slot));
        while (taken.has(slot)) slot += 1;
      }
      const now = this.now();
      const session: Session = {
        email: sessionEmail(userId, slot),
        userId,
        slot,
        vlessId: randomUUID(),
        createdAt: now,
        lastActiveAt: now,
      };
      this.state.sessions.push(session);
      try {
        await this.journal.commit();
        await this.core.addUser(session.email, session.vlessId, this.settings.flow);
      } catch (error) {
        // Not admitted: the journal must not keep a session the client was never told of.
        this.state.sessions = this.state.sessions.filter((s) => s !== session);
        await this.journal.commit().catch(() => undefined);
        throw error;
      }
      this.log('session_started', { user_id: userId, slot });
      return session;
    });
  }

  /** Ends the sessions of these users. */
  endUsers(userIds: Iterable<string>, cause: EndCause): Promise<void> {
    const users = new Set(userIds);
    return this.serially(() =>
      this.endNow(
        this.state.sessions.filter((s) => users.has(s.userId)).map((s) => s.email),
        cause,
      ),
    );
  }

  /** Ends the sessions that carried no bytes for `idleMs`. */
  endIdle(idleMs: number): Promise<void> {
    return this.serially(() => {
      const before = this.now() - idleMs;
      const idle = this.state.sessions.filter((s) => s.lastActiveAt < before);
      return this.endNow(
        idle.map((s) => s.email),
        'idle',
      );
    });
  }

  /** Marks the sessions of these emails active now (their counters moved). */
  touch(emails: Iterable<string>): void {
    const moved = new Set(emails);
    const now = this.now();
    for (const session of this.state.sessions) {
      if (moved.has(session.email)) session.lastActiveAt = now;
    }
  }

  /**
   * Puts the journal's sessions into the core (after the agent or the core restarted: users the
   * core has already are refused and left alone), and finishes endings a crash interrupted.
   */
  restore(): Promise<void> {
    return this.serially(async () => {
      await this.finishEnding();
      let added = 0;
      const failed = await eachLimited(
        this.state.sessions,
        RESTORE_CONCURRENCY,
        async (session) => {
          try {
            await this.core.addUser(session.email, session.vlessId, this.settings.flow);
            added += 1;
          } catch (error) {
            if (!(error instanceof CoreRefused)) throw error;
          }
        },
      );
      if (failed.length > 0) throw failed[0];
      this.log('sessions_restored', { sessions: this.state.sessions.length, added });
    });
  }

  private async endNow(emails: readonly string[], cause: EndCause): Promise<void> {
    const ending = new Set(emails);
    const ended = this.state.sessions.filter((s) => ending.has(s.email));
    if (ended.length > 0) {
      this.state.sessions = this.state.sessions.filter((s) => !ending.has(s.email));
      this.state.ending.push(...ended.map((s) => s.email));
      await this.journal.commit();
    }
    // Also retries endings that an unreachable core left unfinished.
    await this.finishEnding();
    for (const session of ended) {
      this.log('session_ended', { user_id: session.userId, slot: session.slot, cause });
    }
  }

  /** Removes the `ending` users from the core and closes their connections. */
  private async finishEnding(): Promise<void> {
    if (this.state.ending.length === 0) return;
    for (const email of this.state.ending) {
      try {
        await this.core.removeUser(email);
      } catch (error) {
        if (!(error instanceof CoreRefused)) throw error;
      }
      try {
        const closed = await this.connections.close(email);
        if (closed > 0) this.log('connections_closed', { email, connections: closed });
      } catch (error) {
        this.log('connections_close_failed', { email, error: reason(error) });
      }
    }
    this.state.ending = [];
    await this.journal.commit();
  }

  private serially<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(work, work);
    this.queue = run.catch(() => undefined);
    return run;
  }
}
