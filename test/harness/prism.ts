import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exited, freePort } from './processes';

/** Prism's answers about the document itself (its own errors), never the service's. */
const PRISM_PROBLEM = /^https:\/\/stoplight\.io\/prism\/errors#/;

export interface ProxiedAnswer {
  status: number;
  headers: Headers;
  body: unknown;
  /** What Prism found wrong with the request or the answer against the document; [] when none. */
  violations: unknown[];
}

export interface PrismProxy {
  url: string;
  /** Sends a request through the proxy; `body` is sent as JSON. */
  call(
    method: string,
    path: string,
    options?: { headers?: Record<string, string>; body?: unknown },
  ): Promise<ProxiedAnswer>;
  close(): Promise<void>;
}

/**
 * Prism's validating proxy (`prism proxy <document> <upstream> --errors`) on a free loopback port,
 * in front of `upstream`: every request and answer is checked against `document`, and a mismatch
 * becomes Prism's own error answer instead of the service's.
 */
export async function startPrismProxy(document: unknown, upstream: string): Promise<PrismProxy> {
  const dir = mkdtempSync(join(tmpdir(), 'prism-'));
  const file = join(dir, 'openapi.json');
  writeFileSync(file, JSON.stringify(document));
  const port = await freePort();
  const cli = require.resolve('@stoplight/prism-cli/dist/index.js');
  const child = spawn(
    process.execPath,
    [cli, 'proxy', file, upstream, '--errors', '-h', '127.0.0.1', '-p', String(port)],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode === null) child.kill('SIGTERM');
    await exited(child);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitListening(url, child, () => output);
  } catch (error) {
    await stop();
    throw error;
  }

  return {
    url,
    async call(method, path, options = {}) {
      const headers: Record<string, string> = { ...options.headers };
      if (options.body !== undefined) headers['Content-Type'] ??= 'application/json';
      const response = await fetch(url + path, {
        method,
        headers,
        body: options.body === undefined ? undefined : JSON.stringify(options.body),
      });
      const text = await response.text();
      const body: unknown = text === '' ? undefined : parse(text);
      return {
        status: response.status,
        headers: response.headers,
        body,
        violations: violationsOf(response, body),
      };
    },
    close: stop,
  };
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** Prism's findings: its error answer (with --errors), else its `sl-violations` header. */
function violationsOf(response: Response, body: unknown): unknown[] {
  const problem = body as { type?: unknown; validation?: unknown[] } | undefined;
  if (typeof problem?.type === 'string' && PRISM_PROBLEM.test(problem.type)) {
    return problem.validation ?? [problem];
  }
  const header = response.headers.get('sl-violations');
  return header ? (JSON.parse(header) as unknown[]) : [];
}

/** Until Prism answers HTTP at all; fails when it exits first, with what it printed. */
async function waitListening(url: string, child: ChildProcess, output: () => string) {
  const started = Date.now();
  while (Date.now() - started < 40_000) {
    if (child.exitCode !== null)
      throw new Error(`prism exited with ${child.exitCode}: ${output()}`);
    const up = await fetch(url, { method: 'OPTIONS' }).then(
      () => true,
      () => false,
    );
    if (up) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`prism did not listen within 40 s: ${output()}`);
}
