import { type AddressInfo, createServer, type Server, type Socket } from 'node:net';
import { DeadlineClient, QUERY_DEADLINE_MESSAGE } from './deadline-client';

/**
 * A PostgreSQL server that lets a client sign in (AuthenticationOk, ReadyForQuery) and then never
 * answers again, as a server stopped with SIGSTOP after the connection was made.
 */
async function silentServer(): Promise<{ server: Server; port: number; sockets: Socket[] }> {
  const sockets: Socket[] = [];
  const server = createServer((socket) => {
    sockets.push(socket);
    socket.once('data', () => {
      const ok = Buffer.from([0x52, 0, 0, 0, 8, 0, 0, 0, 0]);
      const ready = Buffer.from([0x5a, 0, 0, 0, 5, 0x49]);
      socket.write(Buffer.concat([ok, ready]));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port, sockets };
}

describe('DeadlineClient', () => {
  it('ends a query the server does not answer at its deadline, and the connection with it', async () => {
    const { server, port, sockets } = await silentServer();
    const client = new DeadlineClient({
      host: '127.0.0.1',
      port,
      user: 'u',
      database: 'd',
      query_timeout: 300,
    });
    client.on('error', () => undefined);
    try {
      await client.connect();
      const started = Date.now();
      await expect(client.query('SELECT 1')).rejects.toThrow(QUERY_DEADLINE_MESSAGE);
      expect(Date.now() - started).toBeLessThan(1_000);
      // The next statement on it (a transaction's ROLLBACK) fails at once instead of waiting
      // behind the unanswered one for another deadline.
      await new Promise((resolve) => setImmediate(resolve));
      const next = Date.now();
      await expect(client.query('ROLLBACK')).rejects.toThrow();
      expect(Date.now() - next).toBeLessThan(150);
      // The server sees the connection close (the test times out if it never does).
      if (!sockets[0].closed) await new Promise((resolve) => sockets[0].once('close', resolve));
      expect(sockets).toHaveLength(1);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
