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
const ready = (status: 'I' | 'T'): Buffer => message('Z', Buffer.from(status, 'latin1'));
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

async function connected(port: number): Promise<PipelinedClient> {
  const client = new PipelinedClient({ host: '127.0.0.1', port, user: 'u', database: 'd' });
  client.on('error', () => undefined);
  await client.connect();
  return client;
}

describe('PipelinedClient', () => {
  it("writes a transaction's first statement without waiting for its start's answer", async () => {
    // The server answers only once both have arrived: a client that waited would wait forever.
    const fake = await server(2, (socket, queries) => {
      expect(queries).toEqual(['START TRANSACTION', 'SELECT 1']);
      socket.write(Buffer.concat([done('BEGIN'), ready('T'), done('SELECT 0'), ready('T')]));
    });
    const client = await connected(fake.port);
    try {
      await expect(client.query('START TRANSACTION')).resolves.toMatchObject({ command: 'BEGIN' });
      await expect(client.query('SELECT 1')).resolves.toMatchObject({ command: 'SELECT' });
    } finally {
      client.connection.stream.destroy();
      await fake.close();
    }
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
    const client = await connected(fake.port);
    try {
      await client.query('START TRANSACTION');
      await expect(client.query('SELECT 1')).rejects.toThrow('the start failed');
      await fake.closed;
    } finally {
      client.connection.stream.destroy();
      await fake.close();
    }
  });

  it('queries outside a transaction are answered as they come', async () => {
    const fake = await server(1, (socket) => {
      socket.write(Buffer.concat([done('SELECT 0'), ready('I')]));
    });
    const client = await connected(fake.port);
    try {
      await expect(client.query('SELECT 1')).resolves.toMatchObject({ command: 'SELECT' });
    } finally {
      client.connection.stream.destroy();
      await fake.close();
    }
  });
});
