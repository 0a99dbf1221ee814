import { randomBytes } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { Transactional } from '@nestjs-cls/transactional';
import { Address } from '@ton/core';
import { AppError } from '../../common/errors';
import { type Settings } from '../../config/settings';
import { SETTINGS } from '../../config/settings.module';
import { AdvisoryLocks } from '../../database/advisory-lock';
import { LATE_PAYMENT_DAYS, TON_SCAN_LOCK_KEY } from '../billing.constants';
import { BillingRepository, type InvoiceRecord } from '../billing.repository';
import { isKnownCurrency, nanotonsFor, STARS_CURRENCY, TON_CURRENCY } from '../money';
import { PlansRepository } from '../plans.repository';
import {
  type ReceivedPaymentRecord,
  ReceivedPaymentsRepository,
  type ScanState,
} from '../received-payments.repository';
import { FreshRun } from './fresh-read';
import {
  type CreatedPayment,
  type InvoiceDraft,
  PaymentProvider,
  type PlanQuote,
  type ProviderTransaction,
  type Verdict,
} from './payment-provider';
import { ToncenterClient, type TonPage } from './toncenter.client';
import { TonRates } from './ton-rates';

/** Transactions per toncenter page. */
export const TON_PAGE_LIMIT = 100;

/** Stored transfers reconciliation settles per run at most; the rest wait for the next run. */
export const TON_SETTLE_BATCH = 1_000;

/**
 * The largest amount an invoice may ask for: 10^9 TON, in nanotons. Far below a bigint's 2^63−1;
 * a price above it means a broken exchange rate (or an absurd price), never a real invoice.
 */
export const MAX_INVOICE_NANOTONS = 10n ** 18n;

const DAY_MS = 86_400_000;

/**
 * On-chain payment to the service's wallet. The invoice asks for the price converted to nanotons at
 * the cached rate plus 2%, with a comment unique to the invoice. Every incoming transfer is read
 * (paging back to where the last read stopped) and kept in received_payments; a transfer pays the
 * invoice whose comment it carries when it brings at least the invoice's amount, and, when it
 * arrived after the invoice expired, at least the plan's price at the current rate.
 */
@Injectable()
export class TonProvider extends PaymentProvider {
  readonly kind = 'ton' as const;
  private readonly logger = new Logger(TonProvider.name);
  private readonly reads = new FreshRun<void>();

  constructor(
    @Inject(SETTINGS) private readonly settings: Settings,
    private readonly rates: TonRates,
    private readonly toncenter: ToncenterClient,
    private readonly received: ReceivedPaymentsRepository,
    private readonly billing: BillingRepository,
    private readonly plans: PlansRepository,
    private readonly locks: AdvisoryLocks,
  ) {
    super();
  }

  override isConfigured(): boolean {
    return this.settings.tonWalletAddress !== null;
  }

  /** Stars exist only inside Telegram: there is no rate to convert them to TON. */
  supports(currency: string): boolean {
    return isKnownCurrency(currency) && currency !== STARS_CURRENCY;
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

  /** Every transfer received and not yet settled, oldest first (a batch). */
  async recentTransactions(): Promise<ProviderTransaction[]> {
    await this.readChain();
    return (await this.received.unsettled(this.kind, TON_SETTLE_BATCH)).map(toTransaction);
  }

  /** The not yet settled transfers carrying this invoice's comment, after reading the chain. */
  protected override async transactionsFor(invoice: InvoiceRecord): Promise<ProviderTransaction[]> {
    await this.readChain();
    if (invoice.comment === null) return [];
    return (await this.received.unsettledFor(this.kind, normalComment(invoice.comment))).map(
      toTransaction,
    );
  }

  /** Wallets and people retype comments: it matches trimmed and in any case (ours is lower-case). */
  async verdict(tx: ProviderTransaction, invoice: InvoiceRecord | null): Promise<Verdict> {
    if (!invoice?.comment || normalComment(tx.memo) !== normalComment(invoice.comment)) {
      return 'no_invoice';
    }
    if (invoice.status === 'paid') return invoice.providerTxRef === tx.ref ? 'pays' : 'no_invoice';
    if (tx.amount < BigInt(invoice.amount)) return 'underpaid';
    if (Date.now() >= invoice.createdAt.getTime() + LATE_PAYMENT_DAYS * DAY_MS) return 'too_late';
    const arrived = tx.receivedAt ?? new Date();
    // The nanotons were fixed at creation; after expiry they must still buy the plan today.
    if (arrived > invoice.expiresAt && tx.amount < (await this.priceNow(invoice))) {
      return 'too_late';
    }
    return 'pays';
  }

  /**
   * Records what each transfer turned out to be once reconciliation has confirmed what it could:
   * the invoice it paid, or why it paid none (kept for staff). A transfer that should pay an
   * invoice still unpaid (its confirmation failed) is left for the next run.
   */
  override async settle(transactions: readonly ProviderTransaction[]): Promise<void> {
    if (transactions.length === 0) return;
    const invoices = await this.billing.invoicesByComment(transactions.map((tx) => tx.memo));
    const byComment = new Map(invoices.map((invoice) => [invoice.comment, invoice]));
    for (const tx of transactions) {
      const invoice = byComment.get(normalComment(tx.memo)) ?? null;
      if (invoice?.providerTxRef === tx.ref) {
        await this.received.settle(tx.ref, { invoiceId: invoice.id });
        continue;
      }
      const verdict = await this.verdict(tx, invoice);
      if (verdict === 'pays') {
        this.logger.warn(`transfer ${tx.ref} pays invoice ${invoice?.id} but was not credited yet`);
        continue;
      }
      await this.received.settle(tx.ref, { reason: verdict });
    }
  }

  /** The plan's price today, in nanotons (no 2% buffer): what a late payment must still cover. */
  private async priceNow(invoice: InvoiceRecord): Promise<bigint> {
    const price = await this.plans.priceOf(invoice.planName, invoice.currency);
    if (price === null) return MAX_INVOICE_NANOTONS + 1n;
    if (invoice.currency === TON_CURRENCY) return BigInt(price);
    return nanotonsFor(
      BigInt(price),
      invoice.currency,
      await this.rates.rate(invoice.currency),
      false,
    );
  }

  /**
   * Stores every transfer the wallet had when this was called. Callers at the same time share one
   * read, but only one that started after they asked; instances take turns (the read position is
   * shared).
   */
  private readChain(): Promise<void> {
    const wallet = this.wallet();
    return this.reads.run(() => this.locks.withLock(TON_SCAN_LOCK_KEY, () => this.scan(wallet)));
  }

  /**
   * Pages back from the newest transaction to the last one read before; a read that stopped
   * part-way (upstream failure) is finished first, from where it stopped.
   */
  private async scan(wallet: { text: string; address: Address }): Promise<void> {
    let state = await this.received.scanState(this.kind);
    if (state.scanTopLt !== null && state.scanLowLt !== null) {
      state = await this.pageDown(wallet, state, state.scanLowLt - 1n);
    }
    await this.pageDown(wallet, state, null);
  }

  private async pageDown(
    wallet: { text: string; address: Address },
    from: ScanState,
    endLt: bigint | null,
  ): Promise<ScanState> {
    let state = from;
    let end = endLt;
    // The first read ever goes back as far as an invoice could still be paid, not to the genesis.
    const floor =
      state.doneLt === null ? new Date(Date.now() - (LATE_PAYMENT_DAYS + 1) * DAY_MS) : null;
    for (;;) {
      const page: TonPage = await this.toncenter.page(
        {
          wallet: wallet.text,
          startLt: state.doneLt === null ? null : state.doneLt + 1n,
          endLt: end,
          limit: TON_PAGE_LIMIT,
        },
        wallet.address,
      );
      if (page.count === 0 || page.lowestLt === null || page.highestLt === null) break;
      state = {
        doneLt: state.doneLt,
        scanTopLt: state.scanTopLt ?? page.highestLt,
        scanLowLt: page.lowestLt,
      };
      await this.storePage(page, state);
      const reachedFloor = floor !== null && page.oldestAt !== null && page.oldestAt < floor;
      if (page.count < TON_PAGE_LIMIT || reachedFloor) break;
      end = page.lowestLt - 1n;
    }
    if (state.scanTopLt === null) return state;
    const done: ScanState = { doneLt: state.scanTopLt, scanTopLt: null, scanLowLt: null };
    await this.received.saveScanState(this.kind, done);
    return done;
  }

  /** A page's transfers and how far the read got, together. */
  @Transactional()
  private async storePage(page: TonPage, state: ScanState): Promise<void> {
    await this.received.insertMany(
      page.transfers
        .filter((transfer) => state.doneLt === null || transfer.lt > state.doneLt)
        .map((transfer) => ({
          txRef: transfer.hash,
          provider: this.kind,
          lt: transfer.lt,
          sender: transfer.sender,
          amount: transfer.amount,
          currency: TON_CURRENCY,
          comment: transfer.comment,
          receivedAt: transfer.receivedAt,
        })),
    );
    await this.received.saveScanState(this.kind, state);
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

function toTransaction(payment: ReceivedPaymentRecord): ProviderTransaction {
  return {
    ref: payment.txRef,
    amount: BigInt(payment.amount),
    memo: payment.comment ?? '',
    currency: null,
    receivedAt: payment.receivedAt,
  };
}

function normalComment(comment: string): string {
  return comment.trim().toLowerCase();
}
