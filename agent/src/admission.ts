import type * as http from 'node:http';
import * as https from 'node:https';
import { reason, type Log } from './log';
import { checkNudge } from './nudge';
import { ServiceUnavailable, type ServiceClient } from './service-client';
import type { Sessions } from './sessions';

/** The largest admission body accepted (the contract's 4 KB). */
export const ADMISSION_BODY_MAX = 4096;

interface Answer {
  status: number;
  body: object;
}

const BAD_REQUEST: Answer = { status: 400, body: { reason: 'bad_request' } };
const UNAVAILABLE: Answer = { status: 503, body: { reason: 'unavailable' } };

/** What the nudge route needs: the node's secret and id to check the mac, and whom to tell. */
export interface NudgeTarget {
  nodeId: string;
  secret: string;
  nudged(version: number): void;
}

/**
 * `POST /v1/sessions {session_token}` over TLS: the service validates the token (once), and a valid
 * one becomes a core user with a fresh VLESS id, answered 201 `{vless_id, flow, expires_at}`.
 * `POST /v1/credentials/nudge` on the same pinned TLS: the service says the node's credentials
 * changed (204 when the mac is right, 403 when not, 400 for a bad body).
 */
export class Admission {
  constructor(
    private readonly sessions: Sessions,
    private readonly service: ServiceClient,
    private readonly flow: string,
    private readonly log: Log,
    private readonly nudge: NudgeTarget | null = null,
  ) {}

  listen(options: {
    host: string;
    port: number;
    cert: Buffer;
    key: Buffer;
  }): Promise<https.Server> {
    const server = https.createServer(
      { cert: options.cert, key: options.key, minVersion: 'TLSv1.2' },
      (request, response) => void this.handle(request, response),
    );
    server.headersTimeout = 10_000;
    server.requestTimeout = 20_000;
    server.maxHeadersCount = 50;
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port, options.host, () => {
        server.off('error', reject);
        resolve(server);
      });
    });
  }

  private async handle(
    request: http.IncomingMessage,
    response: http.ServerResponse,
  ): Promise<void> {
    let answer: Answer;
    try {
      answer = await this.answer(request);
    } catch (error) {
      this.log('admission_failed', { error: reason(error) });
      answer = UNAVAILABLE;
    }
    if (answer.status === 204) {
      response.writeHead(204, { 'cache-control': 'no-store' });
      response.end();
      return;
    }
    const body = JSON.stringify(answer.body);
    response.writeHead(answer.status, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
      'cache-control': 'no-store',
    });
    response.end(body);
  }

  private async answer(request: http.IncomingMessage): Promise<Answer> {
    const path = (request.url ?? '').split('?')[0];
    const nudge = path === '/v1/credentials/nudge' ? this.nudge : null;
    if (path !== '/v1/sessions' && !nudge) {
      request.resume();
      return { status: 404, body: { reason: 'not_found' } };
    }
    if (request.method !== 'POST') {
      request.resume();
      return { status: 405, body: { reason: 'method_not_allowed' } };
    }
    const body = await readBody(request);
    if (nudge) {
      const check = checkNudge(body, nudge.secret, nudge.nodeId);
      if (!check.ok) {
        if (check.status === 403) this.log('nudge_refused', {});
        return { status: check.status, body: { reason: check.reason } };
      }
      nudge.nudged(check.version);
      return { status: 204, body: {} };
    }
    const token =
      typeof body === 'object' && body !== null && !Array.isArray(body)
        ? (body as Record<string, unknown>).session_token
        : undefined;
    if (typeof token !== 'string') return BAD_REQUEST;
    let validation;
    try {
      validation = await this.service.validate(token);
    } catch (error) {
      if (error instanceof ServiceUnavailable) {
        this.log('validate_failed', { error: error.message });
        return UNAVAILABLE;
      }
      throw error;
    }
    if (!validation.valid) return { status: 403, body: { reason: validation.reason } };
    const session = await this.sessions.admit(validation.user_id);
    return {
      status: 201,
      body: { vless_id: session.vlessId, flow: this.flow, expires_at: validation.expires_at },
    };
  }
}

/** The body as JSON, or undefined when it is not JSON or is over 4 KB. */
function readBody(request: http.IncomingMessage): Promise<unknown> {
  const declared = Number(request.headers['content-length'] ?? 0);
  if (declared > ADMISSION_BODY_MAX) {
    request.resume();
    return Promise.resolve(undefined);
  }
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (body: unknown): void => {
      if (done) return;
      done = true;
      resolve(body);
    };
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > ADMISSION_BODY_MAX) {
        request.resume();
        finish(undefined);
        return;
      }
      if (!done) chunks.push(chunk);
    });
    request.on('error', () => finish(undefined));
    request.on('end', () => {
      try {
        finish(JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown);
      } catch {
        finish(undefined);
      }
    });
  });
}
