import { createServer } from 'node:net';
import { requestJson, UpstreamError } from './upstream';

/** A port nothing listens on: opened, then closed. */
function closedPort(): Promise<number> {
  return new Promise((done) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => done(port));
    });
  });
}

async function failure(url: string): Promise<UpstreamError> {
  const error: unknown = await requestJson(url).then(
    () => null,
    (e: unknown) => e,
  );
  if (!(error instanceof UpstreamError)) throw new Error(`expected an UpstreamError: ${error}`);
  return error;
}

describe('requestJson failures say their real cause', () => {
  it('a name that does not resolve: getaddrinfo and the name, not "fetch failed"', async () => {
    const error = await failure('http://no-such-host.invalid/v2/rates');
    expect(error.message).toMatch(
      /^request to no-such-host\.invalid failed: getaddrinfo (ENOTFOUND|EAI_AGAIN) no-such-host\.invalid$/,
    );
  });

  it('a refused connection names the address, never the path (a Bot API path holds the token)', async () => {
    const port = await closedPort();
    const error = await failure(`http://127.0.0.1:${port}/bot123456:SECRET-token/getMe`);
    expect(error.message).toBe(
      `request to 127.0.0.1:${port} failed: connect ECONNREFUSED 127.0.0.1:${port}`,
    );
    expect(error.message).not.toContain('SECRET');
  });
});
