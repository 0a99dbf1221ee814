import { Inject, Injectable, Logger } from '@nestjs/common';
import { Address } from '@ton/core';
import { AppError } from '../../common/errors';
import { type Settings } from '../../config/settings';
import { SETTINGS } from '../../config/settings.module';
import { Pacer } from './fresh-read';
import { asRecord, requestJson, UpstreamError } from './upstream';

/** An incoming transfer to our wallet, as read from the chain. */
export interface TonTransfer {
  hash: string;
  lt: bigint;
  sender: string | null;
  /** What the credit phase credited, in nanotons. */
  amount: bigint;
  /** The text comment; null when the transfer carried none. */
  comment: string | null;
  receivedAt: Date;
}

/** One page of the wallet's transactions, newest first. */
export interface TonPage {
  /** How many transactions the page held, incoming or not. */
  count: number;
  highestLt: bigint | null;
  lowestLt: bigint | null;
  /** When the oldest transaction of the page happened. */
  oldestAt: Date | null;
  transfers: TonTransfer[];
}

export interface TonPageRequest {
  wallet: string;
  /** Only transactions at or after this logical time. */
  startLt: bigint | null;
  /** Only transactions at or before this logical time. */
  endLt: bigint | null;
  limit: number;
}

/**
 * toncenter's v3 `GET /api/v3/transactions`, one page at a time, spaced by 1/TON_API_RPS seconds
 * across every caller of this instance (toncenter's own allowance per key).
 */
@Injectable()
export class ToncenterClient {
  private readonly logger = new Logger(ToncenterClient.name);
  private readonly pacer: Pacer;

  constructor(@Inject(SETTINGS) private readonly settings: Settings) {
    this.pacer = new Pacer(Math.ceil(1000 / settings.tonApiRps));
  }

  async page(request: TonPageRequest, wallet: Address): Promise<TonPage> {
    const query = new URLSearchParams({
      account: request.wallet,
      limit: String(request.limit),
      offset: '0',
      sort: 'desc',
    });
    if (request.startLt !== null) query.set('start_lt', request.startLt.toString());
    if (request.endLt !== null) query.set('end_lt', request.endLt.toString());
    const headers: Record<string, string> = { Accept: 'application/json' };
    if (this.settings.tonApiKey) headers['X-API-Key'] = this.settings.tonApiKey;
    await this.pacer.turn();
    let body: unknown;
    try {
      body = await requestJson(`${this.settings.tonApiUrl}/api/v3/transactions?${query}`, {
        headers,
      });
    } catch (error) {
      const reason = error instanceof UpstreamError ? error.message : String(error);
      this.logger.warn(`toncenter transactions unavailable: ${reason}`);
      throw unavailable();
    }
    const list = asRecord(body)?.transactions;
    if (!Array.isArray(list)) {
      this.logger.warn('toncenter answered without a transactions list');
      throw unavailable();
    }
    const page: TonPage = {
      count: 0,
      highestLt: null,
      lowestLt: null,
      oldestAt: null,
      transfers: [],
    };
    for (const raw of list) {
      const lt = logicalTime(raw);
      if (lt === null) {
        this.logger.warn('toncenter answered a transaction without a logical time');
        throw unavailable();
      }
      page.count += 1;
      if (page.highestLt === null || lt > page.highestLt) page.highestLt = lt;
      if (page.lowestLt === null || lt < page.lowestLt) page.lowestLt = lt;
      const at = unixTime(asRecord(raw)?.now);
      if (at && (page.oldestAt === null || at < page.oldestAt)) page.oldestAt = at;
      const transfer = incomingTransfer(raw, wallet);
      if (transfer) page.transfers.push(transfer);
    }
    return page;
  }
}

function unavailable(): AppError {
  return new AppError('UPSTREAM_UNAVAILABLE', 'the TON blockchain API is unavailable');
}

function logicalTime(raw: unknown): bigint | null {
  const lt = asRecord(raw)?.lt;
  return typeof lt === 'string' && /^\d{1,20}$/.test(lt) ? BigInt(lt) : null;
}

function unixTime(value: unknown): Date | null {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0
    ? new Date(value * 1000)
    : null;
}

/**
 * A toncenter v3 transaction as money received by `wallet`, or null when none stayed with us: not
 * an incoming internal message (no source), to another address, nothing credited, or a bounce
 * phase that sent the value back. What counts is what arrived (`description.credit_ph.credit`
 * without `description.bounce`), not `aborted`: a transfer to a wallet that has not run code yet
 * is aborted and still credited. Addresses are compared parsed: toncenter writes `0:<hex>`.
 */
export function incomingTransfer(raw: unknown, wallet: Address): TonTransfer | null {
  const tx = asRecord(raw);
  const inMsg = asRecord(tx?.in_msg);
  const description = asRecord(tx?.description);
  if (!tx || !inMsg || !description) return null;
  const hash = tx.hash;
  const lt = logicalTime(tx);
  const receivedAt = unixTime(tx.now);
  if (typeof hash !== 'string' || hash === '' || lt === null || !receivedAt) return null;
  if (typeof inMsg.source !== 'string' || inMsg.source === '') return null;
  if (inMsg.bounced === true) return null;
  // It sent messages out: not a plain transfer to us (an outgoing one, or value passed on).
  if (!Array.isArray(tx.out_msgs) || tx.out_msgs.length > 0) return null;
  if (!sameAddress(inMsg.destination, wallet)) return null;
  if (description.bounce !== undefined && description.bounce !== null) return null;
  const credit = asRecord(description.credit_ph)?.credit;
  if (typeof credit !== 'string' || !/^\d{1,30}$/.test(credit) || BigInt(credit) === 0n)
    return null;
  const comment = asRecord(asRecord(inMsg.message_content)?.decoded)?.comment;
  return {
    hash,
    lt,
    sender: inMsg.source,
    amount: BigInt(credit),
    comment: typeof comment === 'string' ? comment : null,
    receivedAt,
  };
}

function sameAddress(text: unknown, wallet: Address): boolean {
  if (typeof text !== 'string') return false;
  try {
    return Address.parse(text).equals(wallet);
  } catch {
    return false;
  }
}
