import { randomBytes } from 'node:crypto';
import { type FakeServer, type RecordedRequest, startFakeServer } from './http';

/** One Bot API call: `POST /bot<token>/<method>`. */
export interface BotApiCall {
  token: string;
  method: string;
  body: unknown;
}

/** A method's answer: the `result` of `{ok:true, result}`, or a failure. */
export type BotApiAnswer =
  { result: unknown } | { error: { code: number; description: string; retryAfter?: number } };

export interface FakeBotApi extends FakeServer {
  calls: BotApiCall[];
  /** Calls of one method, oldest first. */
  callsOf(method: string): BotApiCall[];
  /**
   * Overrides the answer of a method (undefined: the usual answer); `createInvoiceLink` answers a
   * fresh link by default.
   */
  answers: Map<string, (call: BotApiCall) => BotApiAnswer | undefined>;
  /** Updates waiting for `getUpdates` (long polling); confirmed ones are dropped by the offset. */
  pendingUpdates: { update_id: number }[];
}

export const FAKE_BOT = {
  id: 7_000_000_001,
  is_bot: true,
  first_name: 'Shop',
  username: 'shop_vpn_bot',
  can_join_groups: false,
  can_read_all_group_messages: false,
  supports_inline_queries: false,
};

const PATH = /^\/bot([^/]+)\/([A-Za-z]+)$/;
/** How long an empty `getUpdates` is held open (Telegram holds it up to `timeout` seconds). */
const LONG_POLL_MS = 300;

/** The Telegram Bot API as the service calls it, recording every call. */
export async function startFakeBotApi(): Promise<FakeBotApi> {
  const calls: BotApiCall[] = [];
  const answers = new Map<string, (call: BotApiCall) => BotApiAnswer | undefined>();
  const pendingUpdates: { update_id: number }[] = [];
  let messageId = 1000;

  const defaultAnswer = async (call: BotApiCall): Promise<BotApiAnswer> => {
    const body = (call.body ?? {}) as Record<string, unknown>;
    switch (call.method) {
      case 'getMe':
        return { result: FAKE_BOT };
      case 'createInvoiceLink':
        return { result: `https://t.me/$${randomBytes(12).toString('base64url')}` };
      case 'sendMessage':
      case 'sendInvoice':
      case 'editMessageText':
        messageId += 1;
        return {
          result: {
            message_id: Number(body.message_id ?? messageId),
            date: Math.floor(Date.now() / 1000),
            chat: { id: Number(body.chat_id ?? 0), type: 'private' },
            text: body.text ?? '',
          },
        };
      case 'getUpdates':
        return { result: await nextUpdates(body) };
      default:
        return { result: true };
    }
  };

  const nextUpdates = async (body: Record<string, unknown>): Promise<unknown[]> => {
    const offset = typeof body.offset === 'number' ? body.offset : 0;
    const drop = () => {
      while (pendingUpdates.length > 0 && pendingUpdates[0].update_id < offset) {
        pendingUpdates.shift();
      }
    };
    const waitUntil = Date.now() + (Number(body.timeout ?? 0) > 0 ? LONG_POLL_MS : 0);
    drop();
    while (pendingUpdates.length === 0 && Date.now() < waitUntil) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      drop();
    }
    const limit = typeof body.limit === 'number' ? body.limit : 100;
    return pendingUpdates.slice(0, limit);
  };

  const server = await startFakeServer(async (request: RecordedRequest) => {
    const match = PATH.exec(request.path);
    if (!match)
      return { status: 404, body: { ok: false, error_code: 404, description: 'Not Found' } };
    const call: BotApiCall = { token: match[1], method: match[2], body: request.body };
    calls.push(call);
    const answer = answers.get(call.method)?.(call) ?? (await defaultAnswer(call));
    if ('error' in answer) {
      const { code, description, retryAfter } = answer.error;
      return {
        status: code,
        body: {
          ok: false,
          error_code: code,
          description,
          ...(retryAfter === undefined ? {} : { parameters: { retry_after: retryAfter } }),
        },
      };
    }
    return { status: 200, body: { ok: true, result: answer.result } };
  });
  return Object.assign(server, {
    calls,
    answers,
    pendingUpdates,
    callsOf: (method: string) => calls.filter((c) => c.method === method),
  });
}
