import { randomBytes } from 'node:crypto';
import { type FakeServer, startFakeServer } from './fake-http';

/** A toncenter v3 transaction, in the wire shape of `GET /api/v3/transactions`. */
export type ToncenterTransaction = Record<string, unknown>;

export interface IncomingTransfer {
  /** Raw form (`0:<hex>`), as toncenter writes it. */
  to: string;
  from?: string | null;
  value: string;
  comment?: string | null;
  hash?: string;
  bounced?: boolean;
  /** The compute phase failed (or, with `uninit`, never ran). */
  aborted?: boolean;
  /**
   * The wallet has no code yet (a new operator's wallet): the compute phase is skipped, the
   * transaction is `aborted`, and a non-bounceable transfer's value stays credited.
   */
  uninit?: boolean;
  /** A bounce phase sent the value back; by default when aborted on a deployed wallet. */
  returned?: boolean;
  /** Messages the transaction sent out (an outgoing transfer has one). */
  outMsgs?: unknown[];
  /** When it happened (unix seconds); now by default. */
  at?: number;
}

let lt = 47_000_000_000_000;

/** A transaction of our wallet receiving a transfer, as toncenter v3 describes it. */
export function tonTransaction(transfer: IncomingTransfer): ToncenterTransaction {
  lt += 10;
  const hash = transfer.hash ?? randomBytes(32).toString('base64');
  const now = transfer.at ?? Math.floor(Date.now() / 1000);
  const uninit = transfer.uninit ?? false;
  const aborted = uninit || (transfer.aborted ?? false);
  const returned = transfer.returned ?? (aborted && !uninit);
  return {
    account: transfer.to,
    hash,
    lt: String(lt),
    now,
    mc_block_seqno: 41_000_000,
    trace_id: hash,
    orig_status: uninit ? 'uninit' : 'active',
    end_status: uninit ? 'uninit' : 'active',
    total_fees: '397175',
    description: {
      type: 'ord',
      aborted,
      destroyed: false,
      credit_first: !returned,
      storage_ph: { storage_fees_collected: '0', status_change: 'unchanged' },
      credit_ph: { credit: transfer.value },
      compute_ph: uninit
        ? { skipped: true, reason: 'no_state' }
        : { skipped: false, success: !aborted, exit_code: aborted ? 33 : 0 },
      ...(returned
        ? {
            bounce: {
              type: 'ok',
              msg_size: { cells: '1', bits: '0' },
              msg_fees: '0',
              fwd_fees: '266669',
            },
          }
        : {}),
    },
    in_msg: {
      hash: randomBytes(32).toString('base64'),
      source: transfer.from === undefined ? `0:${'ab'.repeat(32).toUpperCase()}` : transfer.from,
      destination: transfer.to,
      value: transfer.value,
      fwd_fee: '266669',
      created_lt: String(lt - 1),
      created_at: String(now),
      opcode: transfer.comment ? '0x00000000' : null,
      bounce: !uninit,
      bounced: transfer.bounced ?? false,
      message_content: {
        hash: randomBytes(32).toString('base64'),
        body: 'te6cckEBAQEA',
        decoded:
          transfer.comment === undefined || transfer.comment === null
            ? null
            : { type: 'text_comment', comment: transfer.comment },
      },
    },
    out_msgs: transfer.outMsgs ?? [],
  };
}

/** An outgoing transfer of our wallet (an external message in, one message out). */
export function outgoingTransaction(wallet: string): ToncenterTransaction {
  const tx = tonTransaction({ to: wallet, value: '0', from: null });
  return { ...tx, out_msgs: [{ source: wallet, destination: `0:${'cd'.repeat(32)}`, value: '1' }] };
}

/** Where the fake takes a transfer to show (`{to, value, comment}`): the demo mode's button. */
export const DEMO_TRANSFER_PATH = '/demo/transfers';

export interface FakeToncenter extends FakeServer {
  /** Newest last; answered newest first, as `sort=desc` asks. */
  transactions: ToncenterTransaction[];
  down: boolean;
  /** Answer this many more requests, then fail (502) until it is set to null. */
  failAfter: number | null;
}

/** toncenter v3's `limit` ceiling. */
const MAX_LIMIT = 1000;

const optionalBigint = (value: string | undefined): bigint | null =>
  value === undefined || value === '' ? null : BigInt(value);

export async function startFakeToncenter(): Promise<FakeToncenter> {
  const fake = {} as FakeToncenter;
  const server = await startFakeServer((request) => {
    if (fake.down) return { status: 502, body: 'Bad Gateway' };
    if (fake.failAfter !== null) {
      if (fake.failAfter <= 0) return { status: 502, body: 'Bad Gateway' };
      fake.failAfter -= 1;
    }
    // The demo mode's "simulate the payment": a transfer to `to` appears on the chain.
    if (request.method === 'POST' && request.path === DEMO_TRANSFER_PATH) {
      const body = request.body as { to?: unknown; value?: unknown; comment?: unknown } | null;
      if (typeof body?.to !== 'string' || typeof body.value !== 'string') {
        return { status: 400, body: { error: 'to and value are required' } };
      }
      const comment = typeof body.comment === 'string' ? body.comment : null;
      fake.transactions.push(tonTransaction({ to: body.to, value: body.value, comment }));
      return { status: 201, body: {} };
    }
    if (request.method !== 'GET' || request.path !== '/api/v3/transactions') {
      return { status: 404, body: { error: 'not found' } };
    }
    const limit = Number(request.query.limit ?? 10);
    const offset = Number(request.query.offset ?? 0);
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT || offset < 0) {
      return { status: 422, body: { error: 'invalid limit or offset' } };
    }
    const startLt = optionalBigint(request.query.start_lt);
    const endLt = optionalBigint(request.query.end_lt);
    const matching = fake.transactions.filter((tx) => {
      const txLt = BigInt(tx.lt as string);
      return (startLt === null || txLt >= startLt) && (endLt === null || txLt <= endLt);
    });
    if (request.query.sort !== 'asc') matching.reverse();
    const list = matching.slice(offset, offset + limit);
    return { status: 200, body: { transactions: list, address_book: {} } };
  });
  return Object.assign(fake, server, { transactions: [], down: false, failAfter: null });
}
