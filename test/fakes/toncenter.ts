import { randomBytes } from 'node:crypto';
import { type FakeServer, startFakeServer } from './http';

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
  aborted?: boolean;
  /** Messages the transaction sent out (an outgoing transfer has one). */
  outMsgs?: unknown[];
}

let lt = 47_000_000_000_000;

/** A transaction of our wallet receiving a transfer, as toncenter v3 describes it. */
export function tonTransaction(transfer: IncomingTransfer): ToncenterTransaction {
  lt += 1;
  const hash = transfer.hash ?? randomBytes(32).toString('base64');
  const now = Math.floor(Date.now() / 1000);
  return {
    account: transfer.to,
    hash,
    lt: String(lt),
    now,
    mc_block_seqno: 41_000_000,
    trace_id: hash,
    orig_status: 'active',
    end_status: 'active',
    total_fees: '397175',
    description: {
      type: 'ord',
      aborted: transfer.aborted ?? false,
      destroyed: false,
      credit_first: true,
      compute_ph: { skipped: false, success: true, exit_code: 0 },
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
      bounce: false,
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

export interface FakeToncenter extends FakeServer {
  /** Newest last; answered newest first, as `sort=desc` asks. */
  transactions: ToncenterTransaction[];
  down: boolean;
}

export async function startFakeToncenter(): Promise<FakeToncenter> {
  const fake = {} as FakeToncenter;
  const server = await startFakeServer((request) => {
    if (fake.down) return { status: 502, body: 'Bad Gateway' };
    if (request.method !== 'GET' || request.path !== '/api/v3/transactions') {
      return { status: 404, body: { error: 'not found' } };
    }
    const limit = Number(request.query.limit ?? 10);
    const list = [...fake.transactions].reverse().slice(0, limit);
    return { status: 200, body: { transactions: list, address_book: {} } };
  });
  return Object.assign(fake, server, { transactions: [], down: false });
}
