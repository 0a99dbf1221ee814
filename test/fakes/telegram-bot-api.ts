import { randomBytes } from 'node:crypto';
import { type FakeServer, type RecordedRequest, startFakeServer } from './http';

/** One Bot API call: `POST /bot<token>/<method>`. */
export interface BotApiCall {
  token: string;
  method: string;
  body: unknown;
}

/** A method's answer: the `result` of `{ok:true, result}`, or a failure. */
export type BotApiAnswer = { result: unknown } | { error: { code: number; description: string } };

export interface FakeBotApi extends FakeServer {
  calls: BotApiCall[];
  /** Calls of one method, oldest first. */
  callsOf(method: string): BotApiCall[];
  /** Overrides the answer of a method; `createInvoiceLink` answers a fresh link by default. */
  answers: Map<string, (call: BotApiCall) => BotApiAnswer>;
}

const PATH = /^\/bot([^/]+)\/([A-Za-z]+)$/;

/** The Telegram Bot API as the service calls it, recording every call. */
export async function startFakeBotApi(): Promise<FakeBotApi> {
  const calls: BotApiCall[] = [];
  const answers = new Map<string, (call: BotApiCall) => BotApiAnswer>();
  const server = await startFakeServer((request: RecordedRequest) => {
    const match = PATH.exec(request.path);
    if (!match)
      return { status: 404, body: { ok: false, error_code: 404, description: 'Not Found' } };
    const call: BotApiCall = { token: match[1], method: match[2], body: request.body };
    calls.push(call);
    const answer = answers.get(call.method)?.(call) ?? defaultAnswer(call);
    if ('error' in answer) {
      return {
        status: answer.error.code,
        body: { ok: false, error_code: answer.error.code, description: answer.error.description },
      };
    }
    return { status: 200, body: { ok: true, result: answer.result } };
  });
  return Object.assign(server, {
    calls,
    answers,
    callsOf: (method: string) => calls.filter((c) => c.method === method),
  });
}

function defaultAnswer(call: BotApiCall): BotApiAnswer {
  if (call.method === 'createInvoiceLink') {
    return { result: `https://t.me/$${randomBytes(12).toString('base64url')}` };
  }
  return { result: true };
}
