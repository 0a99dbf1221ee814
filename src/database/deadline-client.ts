import { Client, type ClientConfig } from 'pg';

/** The message of `pg`'s error when a query outlives `query_timeout`. */
export const QUERY_DEADLINE_MESSAGE = 'Query read timeout';

/**
 * A `pg` client whose connection is closed when a query outlives its `query_timeout`: `pg` answers
 * the caller but, out of pipeline mode (`PipelinedClient` is in it, where `pg` closes it itself),
 * keeps the connection, with the unanswered query still ahead of the next one, so a
 * transaction's ROLLBACK (and any later user of the connection) would wait out another deadline
 * behind a server that does not answer. Closed, the rollback fails at once and the pool opens a
 * new connection for the next query.
 */
export class DeadlineClient extends Client {
  constructor(config?: ClientConfig) {
    super(config);
    const query = this.query.bind(this) as (...args: unknown[]) => unknown;
    const guarded = (...args: unknown[]): unknown => {
      const result = query(...args);
      if (result instanceof Promise) {
        result.catch((error: unknown) => {
          if (error instanceof Error && error.message === QUERY_DEADLINE_MESSAGE) {
            this.connection.stream.destroy();
          }
        });
      }
      return result;
    };
    Object.assign(this, { query: guarded });
  }
}
