import { randomBytes } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { Address } from '@ton/core';
import { AppError } from '../../common/errors';
import { type Settings } from '../../config/settings';
import { SETTINGS } from '../../config/settings.module';
import type { InvoiceRecord } from '../billing.repository';
import { Clock } from '../clock';
import { isKnownCurrency, nanotonsFor, TON_CURRENCY } from '../money';
import {
  type CreatedPayment,
  type InvoiceDraft,
  PaymentProvider,
  type PlanQuote,
  type ProviderTransaction,
} from './payment-provider';
import { SingleFlightCache } from './single-flight-cache';
import { TonRates } from './ton-rates';
import { asRecord, requestJson, UpstreamError } from './upstream';

/** How many of the wallet's latest transactions each look at toncenter covers. */
export const TON_RECENT_LIMIT = 100;

/**
 * How long one look at toncenter serves every confirm call and reconciliation: a user's confirm
 * clicks cannot make the service call the paid API more than once per window.
 */
export const TON_TRANSACTIONS_CACHE_MS = 5_000;

/**
 * The largest amount an invoice may ask for: 10^9 TON, in nanotons. Far below a bigint's 2^63−1;
 * a price above it means a broken exchange rate (or an absurd price), never a real invoice.
 */
export const MAX_INVOICE_NANOTONS = 10n ** 18n;

/**
 * On-chain payment to the service's wallet. The invoice asks for the price converted to nanotons at
 * the cached rate plus 2%, with a comment unique to the invoice; a transfer pays the invoice when
 * it is an incoming, non-bounced transfer to our wallet with that comment and at least that value.
 */
@Injectable()
export class TonProvider extends PaymentProvider {
  readonly kind = 'ton' as const;
  private readonly logger = new Logger(TonProvider.name);
  private readonly recent: SingleFlightCache<ProviderTransaction[]>;

  constructor(
    @Inject(SETTINGS) private readonly settings: Settings,
    private readonly rates: TonRates,
    clock: Clock,
  ) {
    super();
    this.recent = new SingleFlightCache(clock, TON_TRANSACTIONS_CACHE_MS);
  }

  override isConfigured(): boolean {
    return this.settings.tonWalletAddress !== null;
  }

  supports(currency: string): boolean {
    return isKnownCurrency(currency);
  }

  async createPayment(draft: InvoiceDraft, plan: PlanQuote): Promise<CreatedPayment> {
    const { text: address } = this.wallet();
    const amount =
      draft.currency === TON_CURRENCY
        ? plan.priceMinor
        : nanotonsFor(plan.priceMinor, draft.currency, await this.rates.rate(draft.currency));
    if (amount > MAX_INVOICE_NANOTONS) {
      this.logger.warn(
        `refused a TON invoice of ${amount} nanotons for ${plan.priceMinor} ${draft.currency} minor units: implausible exchange rate or price`,
      );
      throw new AppError(
        'UPSTREAM_UNAVAILABLE',
        `no plausible TON amount for this price in ${draft.currency} now; try another currency or later`,
      );
    }
    const comment = `inv-${randomBytes(6).toString('hex')}`;
    const link = `ton://transfer/${address}?amount=${amount}&text=${encodeURIComponent(comment)}`;
    return {
      amount,
      comment,
      payment: { address, amount_nano: amount.toString(), comment, link },
    };
  }

  /** The wallet's latest incoming payments, as seen at most TON_TRANSACTIONS_CACHE_MS ago. */
  async recentTransactions(): Promise<ProviderTransaction[]> {
    const wallet = this.wallet();
    return [...(await this.recent.get(() => this.fetchTransactions(wallet)))];
  }

  private async fetchTransactions(wallet: {
    text: string;
    address: Address;
  }): Promise<ProviderTransaction[]> {
    const url =
      `${this.settings.tonApiUrl}/api/v3/transactions?account=${encodeURIComponent(wallet.text)}` +
      `&limit=${TON_RECENT_LIMIT}&sort=desc`;
    const headers: Record<string, string> = { Accept: 'application/json' };
    if (this.settings.tonApiKey) headers['X-API-Key'] = this.settings.tonApiKey;
    let body: unknown;
    try {
      body = await requestJson(url, { headers });
    } catch (error) {
      const reason = error instanceof UpstreamError ? error.message : String(error);
      this.logger.warn(`toncenter transactions unavailable: ${reason}`);
      throw new AppError('UPSTREAM_UNAVAILABLE', 'the TON blockchain API is unavailable');
    }
    const list = asRecord(body)?.transactions;
    if (!Array.isArray(list)) {
      this.logger.warn('toncenter answered without a transactions list');
      throw new AppError('UPSTREAM_UNAVAILABLE', 'the TON blockchain API is unavailable');
    }
    return list.flatMap((raw: unknown) => {
      const payment = incomingPayment(raw, wallet.address);
      return payment ? [payment] : [];
    });
  }

  /** Wallets and people retype comments: it matches trimmed and in any case (ours is lower-case). */
  pays(tx: ProviderTransaction, invoice: InvoiceRecord): boolean {
    return (
      invoice.comment !== null &&
      normalComment(tx.memo) === normalComment(invoice.comment) &&
      tx.amount >= BigInt(invoice.amount)
    );
  }

  /** The receiving wallet, as configured and parsed; 503 when TON payments are not set up. */
  private wallet(): { text: string; address: Address } {
    const text = this.settings.tonWalletAddress;
    if (text) {
      try {
        return { text, address: Address.parse(text) };
      } catch {
        this.logger.error('TON_WALLET_ADDRESS is not a valid TON address');
      }
    }
    throw new AppError('UPSTREAM_UNAVAILABLE', 'TON payments are not configured');
  }
}

/**
 * A toncenter v3 transaction as a payment to `wallet`, or null when it cannot pay anything: not
 * incoming (no source, or it sent messages out), bounced, aborted, without a text comment, or to
 * another address. Addresses are compared parsed: toncenter writes the raw `0:<hex>` form.
 */
export function incomingPayment(raw: unknown, wallet: Address): ProviderTransaction | null {
  const tx = asRecord(raw);
  const inMsg = asRecord(tx?.in_msg);
  if (!tx || !inMsg) return null;
  const hash = tx.hash;
  if (typeof hash !== 'string' || hash === '') return null;
  if (typeof inMsg.source !== 'string' || inMsg.source === '') return null;
  if (!Array.isArray(tx.out_msgs) || tx.out_msgs.length > 0) return null;
  if (asRecord(tx.description)?.aborted !== false) return null;
  if (inMsg.bounced !== false && inMsg.bounced !== undefined && inMsg.bounced !== null) return null;
  if (!sameAddress(inMsg.destination, wallet)) return null;
  const value = inMsg.value;
  if (typeof value !== 'string' || !/^\d{1,30}$/.test(value)) return null;
  const comment = asRecord(asRecord(inMsg.message_content)?.decoded)?.comment;
  if (typeof comment !== 'string' || comment === '') return null;
  return { ref: hash, amount: BigInt(value), memo: comment, currency: null };
}

function normalComment(comment: string): string {
  return comment.trim().toLowerCase();
}

function sameAddress(text: unknown, wallet: Address): boolean {
  if (typeof text !== 'string') return false;
  try {
    return Address.parse(text).equals(wallet);
  } catch {
    return false;
  }
}
