import { execFileSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

const ROOT = join(__dirname, '../..');
const PAGE = join(__dirname, 'page.html');
/** The routes of the test front end; each serves the same page. */
const PAGE_PATHS = new Set(['/', '/account']);
const CLIENT_FILE = /^\/client\/([\w-]+\.js(?:\.map)?)$/;

/**
 * Compiles client/ with its own tsconfig, as `npm run build:client` does, into `outDir` rather than
 * client/dist so that a build running beside this test cannot change the files under test. No type
 * check (the same JavaScript, in half the time): CI's `npm run build:client` type-checks it.
 */
export function buildClient(outDir: string): void {
  const tsc = require.resolve('typescript/bin/tsc');
  const args = [tsc, '-p', 'client/tsconfig.json', '--outDir', outDir, '--noCheck'];
  try {
    execFileSync(process.execPath, args, { cwd: ROOT, stdio: 'pipe', encoding: 'utf8' });
  } catch (error) {
    const output = (error as { stdout?: string }).stdout ?? '';
    throw new Error(`building client/ failed:\n${output}`, { cause: error });
  }
}

export interface PageServer {
  /** `http://127.0.0.1:<port>` */
  origin: string;
  close(): Promise<void>;
}

export interface PageServerOptions {
  /** Where `buildClient` wrote the client; served under `/client/`. */
  clientDir: string;
  /** Shown in the page's heading: which origin this is. */
  label: string;
  /** The service's origin, read on each request so the service may start after this server. */
  apiBase: () => string;
}

/** A static front end on 127.0.0.1: the test page at `/` and `/account`, the client at `/client/*`. */
export async function servePages(options: PageServerOptions): Promise<PageServer> {
  const template = await readFile(PAGE, 'utf8');
  const server = createServer((request, response) => {
    answer(request, response, template, options).catch((error: unknown) => {
      response.writeHead(500, { 'Content-Type': 'text/plain' });
      response.end(String(error));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { origin: `http://127.0.0.1:${port}`, close: () => closeServer(server) };
}

async function answer(
  request: IncomingMessage,
  response: ServerResponse,
  template: string,
  { clientDir, label, apiBase }: PageServerOptions,
): Promise<void> {
  const path = new URL(request.url ?? '/', 'http://page.invalid').pathname;
  const headers = { 'Cache-Control': 'no-store' };
  if (request.method === 'GET' && PAGE_PATHS.has(path)) {
    const html = template.replaceAll('__API_BASE__', apiBase()).replaceAll('__PAGE_LABEL__', label);
    response.writeHead(200, { ...headers, 'Content-Type': 'text/html; charset=utf-8' });
    response.end(html);
    return;
  }
  const file = CLIENT_FILE.exec(path)?.[1];
  if (request.method === 'GET' && file !== undefined) {
    const body = await readFile(join(clientDir, file)).catch(() => null);
    if (body !== null) {
      const type = file.endsWith('.map') ? 'application/json' : 'text/javascript; charset=utf-8';
      response.writeHead(200, { ...headers, 'Content-Type': type });
      response.end(body);
      return;
    }
  }
  response.writeHead(404, { ...headers, 'Content-Type': 'text/plain' });
  response.end('not found');
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve, reject) => {
    server.close((error) => (error ? reject(error) : resolve()));
    // Keep-alive connections of the browser would otherwise hold the server open.
    server.closeAllConnections();
  });
}
