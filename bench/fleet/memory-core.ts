/**
 * The tunnel core of a simulated node in `npm run bench:fleet`: the agent's `CoreClient` calls
 * answered in memory, with the semantics of the gRPC fake in agent/test/fake-core.ts (and of Xray):
 * adding an email twice or removing an absent one is refused, per-user counters survive removal
 * and are never reset by a read. Five thousand gRPC servers would measure gRPC, not the service.
 * It also counts every byte it carried, the figure the service's counters must end up equal to.
 */
import type { CoreClient, UserCounters } from '../../agent/src/core-client';
import { CoreRefused } from '../../agent/src/core-client';

export class MemoryCore implements Pick<
  CoreClient,
  'addUser' | 'removeUser' | 'userCounters' | 'uptime' | 'close'
> {
  private readonly users = new Set<string>();
  private readonly counters = new Map<string, UserCounters>();
  private readonly startedAt = Date.now() - 3_600_000;
  /** Every byte carried so far (up and down), by any user. */
  carried = 0;

  addUser(email: string): Promise<void> {
    if (this.users.has(email)) return Promise.reject(new CoreRefused(`${email} already exists`));
    this.users.add(email);
    return Promise.resolve();
  }

  removeUser(email: string): Promise<void> {
    if (!this.users.delete(email)) return Promise.reject(new CoreRefused(`${email} not found`));
    return Promise.resolve();
  }

  userCounters(): Promise<Map<string, UserCounters>> {
    const copy = new Map<string, UserCounters>();
    for (const [email, { up, down }] of this.counters) copy.set(email, { up, down });
    return Promise.resolve(copy);
  }

  uptime(): Promise<number> {
    return Promise.resolve(Math.floor((Date.now() - this.startedAt) / 1000));
  }

  close(): void {}

  /** Traffic of a user the core has (a session that is not in the core carries nothing). */
  carry(email: string, up: number, down: number): void {
    if (!this.users.has(email)) return;
    const counter = this.counters.get(email) ?? { up: 0, down: 0 };
    counter.up += up;
    counter.down += down;
    this.counters.set(email, counter);
    this.carried += up + down;
  }
}
