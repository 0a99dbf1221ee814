import { Inject, Injectable, type OnApplicationShutdown, Optional } from '@nestjs/common';
import { Propagation, TransactionHost } from '@nestjs-cls/transactional';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import { sqlRows } from './sql';

/**
 * PostgreSQL itself, when the service's pool goes through a transaction-mode pooler
 * (`DATABASE_DIRECT_URL`): the locks below that outlive one statement hold their connections
 * here. Through the pooler, a session's lock would stay on a server connection that other
 * transactions then get, and a long lock transaction would keep one of the pooler's few server
 * connections from everyone else.
 */
export const LOCK_DATA_SOURCE = Symbol('LOCK_DATA_SOURCE');

/** PostgreSQL advisory locks, the one way jobs and writers serialise on something without a row. */
@Injectable()
export class AdvisoryLocks implements OnApplicationShutdown {
  constructor(
    private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>,
    @Optional() @Inject(LOCK_DATA_SOURCE) private readonly direct?: DataSource | null,
  ) {}

  async onApplicationShutdown(): Promise<void> {
    if (this.direct?.isInitialized) await this.direct.destroy();
  }

  /**
   * Waits for the lock of `name` and holds it until the current transaction ends: changes of a
   * thing whose row may not exist yet (a plan, a setting, a user's open round) run one at a time.
   */
  async lock(name: string): Promise<void> {
    if (!this.txHost.isTransactionActive()) {
      // Outside a transaction the lock would be released at once and serialise nothing.
      throw new Error(`advisory lock ${name} taken outside a transaction`);
    }
    await this.txHost.tx.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [name]);
  }

  /**
   * Runs `work` while holding lock `key` on a connection of its own (a job on one instance at a
   * time); null, without running it, when another instance holds it. `work` itself runs outside
   * the lock's transaction, so its own transactions commit or fail one by one.
   */
  tryWithLock<T>(key: number, work: () => Promise<T>): Promise<T | null> {
    return this.lockTransaction(async (tx) => {
      const [row] = await sqlRows<{ locked: boolean }>(
        tx,
        `SELECT pg_try_advisory_xact_lock(${lockKey(key)}) AS locked`,
      );
      return row.locked ? this.txHost.withoutTransaction(work) : null;
    });
  }

  /**
   * Runs `work` while holding lock `key` on a connection of its own, waiting for it when another
   * instance holds it: a reader of shared progress (the wallet's read position) never runs twice
   * at once. `work` runs outside the lock's transaction, as with `tryWithLock`.
   */
  withLock<T>(key: number, work: () => Promise<T>): Promise<T> {
    return this.lockTransaction(async (tx) => {
      await tx.query(`SELECT pg_advisory_xact_lock(${lockKey(key)})`);
      return this.txHost.withoutTransaction(work);
    });
  }

  /** `inside` in a transaction of its own: on the direct connection when there is one. */
  private lockTransaction<T>(inside: (tx: EntityManager) => Promise<T>): Promise<T> {
    if (this.direct) return this.direct.transaction(inside);
    return this.txHost.withTransaction(Propagation.RequiresNew, () => inside(this.txHost.tx));
  }

  /**
   * Takes lock `key` for as long as the caller likes, on a connection of its own and outside any
   * transaction (long polling holds it for hours; an open transaction would be wrong for that).
   * Null, without waiting, when another instance holds it. Released by `release()`, or when the
   * connection drops.
   */
  async hold(key: number): Promise<HeldLock | null> {
    const runner = (this.direct ?? this.txHost.tx.connection).createQueryRunner();
    await runner.connect();
    try {
      const [row] = await sqlRows<{ locked: boolean }>(
        runner.manager,
        'SELECT pg_try_advisory_lock($1) AS locked',
        [key],
      );
      if (!row.locked) {
        await runner.release();
        return null;
      }
    } catch (error) {
      await runner.release();
      throw error;
    }
    return {
      async release() {
        try {
          await runner.query('SELECT pg_advisory_unlock($1)', [key]);
        } finally {
          await runner.release();
        }
      },
    };
  }
}

/**
 * `key` written into the statement that takes a lock which its transaction then holds while a job
 * works elsewhere. A statement with parameters goes through the extended protocol, whose unnamed
 * portal keeps its snapshot until the next statement or the end of the transaction: the idle lock
 * transaction then held back the oldest transaction id PostgreSQL may clean up after, for every
 * table, as long as the job ran (a traffic report's users rewritten to new pages and every index
 * for the first 15 s of a benchmark, 3-7 × slower). A statement without parameters leaves no
 * portal.
 */
function lockKey(key: number): string {
  if (!Number.isSafeInteger(key)) throw new TypeError(`advisory lock key ${key} is not an integer`);
  return String(key);
}

/** A lock taken by `AdvisoryLocks.hold`. */
export interface HeldLock {
  release(): Promise<void>;
}
