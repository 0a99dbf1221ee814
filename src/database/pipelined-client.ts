import type { Socket } from 'node:net';
import type { ClientConfig, QueryConfig, QueryResult } from 'pg';
import { DeadlineClient } from './deadline-client';

/** The text TypeORM starts every top-level transaction with. */
const START_TRANSACTION = 'START TRANSACTION';
/** The texts TypeORM ends a top-level transaction with. */
const COMMIT = 'COMMIT';
const ROLLBACK = 'ROLLBACK';

/** What `pg` answers `START TRANSACTION` with; TypeORM reads none of it. */
const STARTED: QueryResult = { command: 'BEGIN', rowCount: null, oid: 0, rows: [], fields: [] };

/**
 * A `pg` client in pipeline mode (node-postgres' `pipeline: true`: a query is written at once,
 * without waiting for the answers of those before it, which still come back in order) whose
 * `START TRANSACTION` is answered at once, so that the transaction's first statement is written
 * right behind it: one round trip fewer for every transaction. On a busy process a round trip is
 * mostly the wait for the event loop to read the answer (a traffic batch's connection sat idle in
 * its transaction after `START TRANSACTION` about a sixth of its time at full scale;
 * bench/RESULTS.md).
 *
 * The start's own answer still arrives, and the transaction's next query on this client answers
 * only after it: should the start fail, that query fails with the start's error, and the connection
 * is closed so that nothing else runs on it outside a transaction. What was already written behind
 * the start (its first statement, or the statements of a `pipelinedRows`) would have run, each
 * committing on its own; this relies on a start that cannot fail on a connection that is up and
 * not in a failed transaction, where what follows it fails as well. The start is told by its text,
 * TypeORM's own (`START TRANSACTION`); a transaction started otherwise simply waits for it.
 *
 * Everything else is as without pipelining: TypeORM and the repositories await each query before
 * the next, so only a transaction's start and its first statement share the wire, the statements
 * a repository writes together on purpose (`pipelinedRows`), and a transaction's last writes with
 * its COMMIT (`writeAhead`, through `writtenAhead`). Queries that keep a portal open across round
 * trips (cursors, streams) are refused in pipeline mode; the service runs none. A COMMIT that
 * PostgreSQL answers with a rollback fails, on every client (`committed`).
 */
export class PipelinedClient extends DeadlineClient {
  /**
   * The answers of what was written but not yet awaited (a start, `writeAhead`'s statements); the
   * next query waits for them, and fails with the first of their failures.
   */
  private ahead: Promise<unknown> | undefined;
  /** Whether the connection's socket holds its writes until the current run of code is over. */
  private holding = false;

  constructor(config?: ClientConfig) {
    super({ ...config, pipeline: true } as ClientConfig);
  }

  /**
   * Writes `query`, in a transaction, and leaves its answer to the transaction's next query, which
   * waits for it and fails with its failure. For a transaction's last writes: its COMMIT is then
   * written right behind them, one round trip for all, and should one of them fail (PostgreSQL
   * then answers the COMMIT with a rollback) the commit fails with that failure. A ROLLBACK does
   * not wait: it ends the transaction whatever they answered.
   */
  writeAhead(query: QueryConfig): void {
    this.writeTogether();
    const write = super.query.bind(this) as (config: QueryConfig) => Promise<unknown>;
    this.leaveAhead(write(query));
  }

  // pg's query has a dozen overloads; only the promise form with plain text is handled here.
  override query(...args: unknown[]): never {
    this.writeTogether();
    const [config, values, callback] = args;
    const query = super.query.bind(this) as (...given: unknown[]) => unknown;
    if (callback !== undefined || typeof values === 'function') return query(...args) as never;
    if (config === START_TRANSACTION && (values === undefined || isEmpty(values))) {
      const started = query(config) as Promise<unknown>;
      this.leaveAhead(
        started.catch((error: unknown) => {
          this.connection.stream.destroy();
          throw error;
        }),
      );
      return Promise.resolve(STARTED) as never;
    }
    let result = query(...args) as Promise<unknown>;
    if (config === COMMIT) result = result.then(committed);
    const ahead = this.ahead;
    if (ahead === undefined) return result as never;
    this.ahead = undefined;
    if (config === ROLLBACK) return result as never;
    // The first failure ahead is the one to report; the query's own is then of no interest.
    result.catch(() => undefined);
    return ahead.then(() => result) as never;
  }

  /**
   * Holds the socket's writes (`cork`) until the code now running and every promise callback it
   * sets off have run, then sends them at once (`uncork`: one `writev`). A transaction's start and
   * its first statement, the statements of a `pipelinedRows` and the writes ahead with their
   * COMMIT are written each by its own query, each of which pg sends with a system call of its
   * own, and a system call to the loopback is a measurable share of a request's CPU
   * (bench/RESULTS.md, issue 46). The wait ends before any I/O is read: no answer can be held
   * up by it, as none can come before its query is sent.
   */
  private writeTogether(): void {
    const stream = this.connection.stream as Partial<Pick<Socket, 'cork' | 'uncork'>>;
    if (this.holding || stream.cork === undefined || stream.uncork === undefined) return;
    this.holding = true;
    stream.cork();
    // The microtask runs once those already queued have; the tick after all of theirs.
    queueMicrotask(() =>
      process.nextTick(() => {
        this.holding = false;
        stream.uncork!();
      }),
    );
  }

  /** Adds `answer` to what the next query waits for, kept from being reported unhandled meanwhile. */
  private leaveAhead(answer: Promise<unknown>): void {
    answer.catch(() => undefined);
    const before = this.ahead;
    const ahead = before === undefined ? answer : before.then(() => answer);
    ahead.catch(() => undefined);
    this.ahead = ahead;
  }
}

/**
 * A COMMIT's answer; its failure when PostgreSQL rolled the transaction back instead, which it does,
 * without an error, when one of the transaction's statements had failed: a failure its caller then
 * did not see (caught and dropped, or left ahead and taken by a query whose own failure was), and
 * whose transaction must not pass for committed.
 */
function committed(answer: unknown): unknown {
  if ((answer as QueryResult | undefined)?.command === ROLLBACK) {
    throw new Error('the transaction had failed: PostgreSQL rolled it back instead of committing');
  }
  return answer;
}

function isEmpty(values: unknown): boolean {
  return Array.isArray(values) && values.length === 0;
}
