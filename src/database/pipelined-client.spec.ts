import { type AddressInfo, createServer, type Server, type Socket } from 'node:net';
import { PipelinedClient } from './pipelined-client';

/** A backend message: its type byte, its length, its body. */
function message(type: string, body: Buffer = Buffer.alloc(0)): Buffer {
  const head = Buffer.alloc(5);
  head.write(type, 0, 'latin1');
  head.writeInt32BE(4 + body.length, 1);
  return Buffer.concat([head, body]);
}
const text = (value: string): Buffer => Buffer.from(`${value}\0`, 'utf8');
const ready = (status: 'I' | 'T' | 'E'): Buffer => message('Z', Buffer.from(status, 'latin1'));
const done = (tag: string): Buffer => message('C', text(tag));
const failed = (sqlState: string, why: string): Buffer =>
  message(
    'E',
    Buffer.concat([text(`SERROR`), text(`C${sqlState}`), text(`M${why}`), Buffer.alloc(1)]),
  );

/**
 * A PostgreSQL server that signs a client in, then reads simple queries ('Q') and answers none
 * until `expected` have arrived; `answer` then writes the answers of all of them.
 */
async function server(
  expected: number,
  answer: (socket: Socket, queries: string[]) => void,
): Promise<{ port: number; close: () => Promise<void>; closed: Promise<void> }> {
  let closedConnection!: () => void;
  const closed = new Promise<void>((resolve) => (closedConnection = resolve));
  const sockets: Socket[] = [];
  const listener: Server = createServer((socket) => {
    sockets.push(socket);
    socket.on('close', () => closedConnection());
    let signedIn = false;
    let pending = Buffer.alloc(0);
    const queries: string[] = [];
    socket.on('data', (chunk: Buffer) => {
      if (!signedIn) {
        signedIn = true;
        socket.write(Buffer.concat([message('R', Buffer.alloc(4)), ready('I')]));
        return;
      }
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 5 && pending.length >= 1 + pending.readInt32BE(1)) {
        const length = pending.readInt32BE(1);
        if (pending.toString('latin1', 0, 1) === 'Q') {
          queries.push(pending.toString('utf8', 5, length).replace(/\0$/, ''));
        }
        pending = pending.subarray(1 + length);
      }
      if (queries.length === expected) answer(socket, queries.splice(0));
    });
  });
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  return {
    port: (listener.address() as AddressInfo).port,
    closed,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => listener.close(() => resolve()));
    },
  };
}

/**
 * A client signed in to `fake`, handed to `use`; its connection and the server closed afterwards,
 * whatever `use` did.
 */
async function talkingTo(
  fake: Awaited<ReturnType<typeof server>>,
  use: (client: PipelinedClient) => Promise<void>,
): Promise<void> {
  const client = new PipelinedClient({
    host: '127.0.0.1',
    port: fake.port,
    user: 'u',
    database: 'd',
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await use(client);
  } finally {
    client.connection.stream.destroy();
    await fake.close();
  }
}

/** How many times the client's socket has written since this was called (each a system call). */
function socketWrites(client: PipelinedClient): () => number {
  // A stream's own write hooks: `_writev` for what was held together, `_write` for one chunk.
  const socket = client.connection.stream as unknown as Record<
    string,
    (...args: unknown[]) => void
  >;
  let count = 0;
  for (const hook of ['_write', '_writev']) {
    const write = socket[hook].bind(socket);
    socket[hook] = (...args: unknown[]): void => {
      count++;
      write(...args);
    };
  }
  return () => count;
}

describe('PipelinedClient', () => {
  it("writes a transaction's first statement without waiting for its start's answer", async () => {
    // The server answers only once both have arrived: a client that waited would wait forever.
    const fake = await server(2, (socket, queries) => {
      expect(queries).toEqual(['START TRANSACTION', 'SELECT 1']);
      socket.write(Buffer.concat([done('BEGIN'), ready('T'), done('SELECT 0'), ready('T')]));
    });
    await talkingTo(fake, async (client) => {
      await expect(client.query('START TRANSACTION')).resolves.toMatchObject({ command: 'BEGIN' });
      await expect(client.query('SELECT 1')).resolves.toMatchObject({ command: 'SELECT' });
    });
  });

  it('sends what a run of code and the promises it settles write in one write to the socket', async () => {
    const fake = await server(3, (socket) => {
      socket.write(Buffer.concat([done('BEGIN'), ready('T'), done('SELECT 0'), ready('T')]));
      socket.write(Buffer.concat([done('SELECT 0'), ready('T')]));
    });
    await talkingTo(fake, async (client) => {
      const writes = socketWrites(client);
      // As TypeORM and a repository write a transaction's start and first statements: each query
      // after the one before it has answered (the start at once), in a later promise callback.
      await client.query('START TRANSACTION');
      await Promise.resolve();
      const answers = Promise.all([client.query('SELECT 1'), client.query('SELECT 2')]);
      await expect(answers).resolves.toHaveLength(2);
      expect(writes()).toBe(1);
    });
  });

  it('a start that failed fails the statement written behind it, and closes the connection', async () => {
    // The statement behind the start ran outside any transaction: nothing may follow it there.
    const fake = await server(2, (socket) => {
      socket.write(
        Buffer.concat([
          failed('57P01', 'the start failed'),
          ready('I'),
          done('SELECT 0'),
          ready('I'),
        ]),
      );
    });
    await talkingTo(fake, async (client) => {
      await client.query('START TRANSACTION');
      await expect(client.query('SELECT 1')).rejects.toThrow('the start failed');
      await fake.closed;
    });
  });

  it("writes a transaction's last writes and its COMMIT in one round trip", async () => {
    // The server answers only once all three have arrived: a client that waited would wait forever.
    const fake = await server(3, (socket, queries) => {
      expect(queries).toEqual(['UPDATE a', 'UPDATE b', 'COMMIT']);
      socket.write(Buffer.concat([done('UPDATE 1'), ready('T'), done('UPDATE 2'), ready('T')]));
      socket.write(Buffer.concat([done('COMMIT'), ready('I')]));
    });
    await talkingTo(fake, async (client) => {
      const writes = socketWrites(client);
      client.writeAhead({ text: 'UPDATE a' });
      client.writeAhead({ text: 'UPDATE b' });
      await expect(client.query('COMMIT')).resolves.toMatchObject({ command: 'COMMIT' });
      expect(writes()).toBe(1);
    });
  });

  it('a write ahead that failed fails the COMMIT behind it with its own error', async () => {
    // PostgreSQL answers the COMMIT of a failed transaction with a rollback, not an error: a
    // client that took that answer for a commit would report the lost writes as kept.
    const fake = await server(3, (socket) => {
      socket.write(
        Buffer.concat([
          done('UPDATE 1'),
          ready('T'),
          failed('23514', 'the second write failed'),
          ready('E'),
          done('ROLLBACK'),
          ready('I'),
        ]),
      );
    });
    await talkingTo(fake, async (client) => {
      client.writeAhead({ text: 'UPDATE a' });
      client.writeAhead({ text: 'UPDATE b' });
      await expect(client.query('COMMIT')).rejects.toThrow('the second write failed');
    });
  });

  it('a COMMIT that PostgreSQL answers with a rollback fails, with no write ahead too', async () => {
    // A statement of the transaction failed and its caller dropped the failure: the transaction
    // is gone, and must not pass for committed.
    const fake = await server(1, (socket) => {
      socket.write(Buffer.concat([done('ROLLBACK'), ready('I')]));
    });
    await talkingTo(fake, async (client) => {
      await expect(client.query('COMMIT')).rejects.toThrow('rolled it back instead of committing');
    });
  });

  it('a ROLLBACK behind a failed write ahead ends the transaction without its error', async () => {
    const fake = await server(2, (socket, queries) => {
      if (queries[0] === 'UPDATE a') {
        socket.write(Buffer.concat([failed('23514', 'the write failed'), ready('E')]));
        socket.write(Buffer.concat([done('ROLLBACK'), ready('I')]));
      } else {
        socket.write(Buffer.concat([done('SELECT 1'), ready('I'), done('SELECT 1'), ready('I')]));
      }
    });
    await talkingTo(fake, async (client) => {
      client.writeAhead({ text: 'UPDATE a' });
      await expect(client.query('ROLLBACK')).resolves.toMatchObject({ command: 'ROLLBACK' });
      // Nothing of it is left ahead of what the connection runs next.
      await expect(
        Promise.all([client.query('SELECT 1'), client.query('SELECT 2')]),
      ).resolves.toEqual([
        expect.objectContaining({ command: 'SELECT' }),
        expect.objectContaining({ command: 'SELECT' }),
      ]);
    });
  });

  it('queries outside a transaction are answered as they come', async () => {
    const fake = await server(1, (socket) => {
      socket.write(Buffer.concat([done('SELECT 0'), ready('I')]));
    });
    await talkingTo(fake, async (client) => {
      await expect(client.query('SELECT 1')).resolves.toMatchObject({ command: 'SELECT' });
    });
  });
});
