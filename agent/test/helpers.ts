import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import * as https from 'node:https';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { buildSync } from 'esbuild';
import { generateAdmissionCertificate } from '../../src/nodes/node-credentials';

const ROOT = path.join(__dirname, '..', '..');

export function tempDir(name: string): string {
  return mkdtempSync(path.join(tmpdir(), `${name}-`));
}

export interface TlsFiles {
  cert: string;
  key: string;
  certPem: string;
  /** Hex SHA-256 of the certificate's DER: what a routing entry's `admission_cert_sha256` says. */
  sha256: string;
}

/** Writes an admission certificate and key (PEM) where the agent's settings point. */
export function tlsFiles(dir: string, certPem: string, keyPem: string, sha256: string): TlsFiles {
  const cert = path.join(dir, 'admission.crt');
  const key = path.join(dir, 'admission.key');
  writeFileSync(cert, certPem);
  writeFileSync(key, keyPem, { mode: 0o600 });
  return { cert, key, certPem, sha256 };
}

/** A self-signed admission certificate, made as the service makes one for each node. */
export async function selfSignedCert(dir: string): Promise<TlsFiles> {
  const made = await generateAdmissionCertificate('127.0.0.1');
  return tlsFiles(dir, made.certPem, made.keyPem, made.certSha256);
}

/**
 * Calls POST /v1/sessions as a client app does: TLS to the agent, trusting exactly the certificate
 * whose SHA-256 the routing entry names (the certificate is its own trust anchor; no host name).
 */
export function admit(
  url: string,
  pin: { certPem: string; sha256: string },
  body: unknown,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const payload = Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
  return new Promise((resolve, reject) => {
    const request = https.request(
      url,
      {
        method: 'POST',
        ca: pin.certPem,
        checkServerIdentity: (_host, cert) => {
          const seen = createHash('sha256').update(cert.raw).digest('hex');
          return seen === pin.sha256 ? undefined : new Error(`certificate ${seen} is not pinned`);
        },
        headers: { 'content-type': 'application/json', 'content-length': payload.length },
        timeout: 15_000,
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({
            status: response.statusCode ?? 0,
            // A 204 (the nudge's answer) has no body.
            body: text ? (JSON.parse(text) as Record<string, unknown>) : {},
          });
        });
      },
    );
    request.on('timeout', () => request.destroy(new Error('admission timed out')));
    request.on('error', reject);
    request.end(payload);
  });
}

let bundle: string | null = null;

/** The agent built as `npm run build` builds it (one file), into a temporary folder once per file. */
export function agentBundle(): string {
  if (bundle) return bundle;
  const outfile = path.join(tempDir('agent-bundle'), 'agent.js');
  buildSync({
    entryPoints: [path.join(ROOT, 'agent', 'src', 'main.ts')],
    bundle: true,
    platform: 'node',
    target: 'node18',
    outfile,
    logLevel: 'warning',
  });
  bundle = outfile;
  return outfile;
}

export interface AgentProcess {
  child: ChildProcess;
  /** Every JSON line it logged so far. */
  lines: Record<string, unknown>[];
  waitFor(
    event: string,
    match?: (line: Record<string, unknown>) => boolean,
    timeoutMs?: number,
  ): Promise<Record<string, unknown>>;
  /** SIGTERM, and the exit code. */
  stop(): Promise<number | null>;
  kill(): Promise<void>;
}

/** Runs the built agent with these settings (the node's environment file). */
export function spawnAgent(env: Record<string, string>, bundleFile = agentBundle()): AgentProcess {
  const child = spawn(process.execPath, [bundleFile], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: Record<string, unknown>[] = [];
  const waiters: (() => void)[] = [];
  let partial = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    const parts = (partial + chunk.toString('utf8')).split('\n');
    partial = parts.pop() ?? '';
    for (const part of parts) {
      if (!part.trim()) continue;
      lines.push(JSON.parse(part) as Record<string, unknown>);
    }
    for (const wake of waiters.splice(0)) wake();
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => resolve(code)),
  );
  return {
    child,
    lines,
    async waitFor(event, match = () => true, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      let seen = 0;
      for (;;) {
        for (; seen < lines.length; seen += 1) {
          if (lines[seen].event === event && match(lines[seen])) return lines[seen];
        }
        if (child.exitCode !== null) {
          throw new Error(
            `agent exited (${child.exitCode}) before ${event}: ${stderr}${JSON.stringify(lines.slice(-5))}`,
          );
        }
        if (Date.now() > deadline) {
          throw new Error(
            `no ${event} within ${timeoutMs} ms; last lines ${JSON.stringify(lines.slice(-5))}`,
          );
        }
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 100);
        });
      }
    },
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      return exited;
    },
    async kill() {
      if (child.exitCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

export const sleep = (ms: number): Promise<void> =>
  new Promise((resolve) => setTimeout(resolve, ms));
