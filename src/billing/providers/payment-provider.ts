import { Inject, Injectable } from '@nestjs/common';
import type { InvoiceProvider } from '../entities/invoice.entity';
import type { InvoiceRecord } from '../billing.repository';
import type { UnmatchedReason } from '../entities/received-payment.entity';

/** An invoice about to be written: its id exists already (Telegram carries it as the payload). */
export interface InvoiceDraft {
  id: string;
  userId: string;
  planName: string;
  currency: string;
}

/** The plan being bought and its price in the draft's currency. */
export interface PlanQuote {
  name: string;
  durationDays: number;
  priceMinor: bigint;
}

/** What a provider adds to a new invoice. */
export interface CreatedPayment {
  /** In the provider's own unit. */
  amount: bigint;
  /** TON only: the comment that ties a transfer to the invoice. */
  comment: string | null;
  /** The contract's `payment` object. */
  payment: Record<string, unknown>;
}

/** An incoming payment as a provider saw it; only payments that could pay something are listed. */
export interface ProviderTransaction {
  /** Unique per transaction: the TON transaction hash, the Telegram charge id. */
  ref: string;
  /** In the provider's own unit. */
  amount: bigint;
  /** What ties it to an invoice: the TON comment, or the Telegram payload (the invoice id). */
  memo: string;
  /** The currency it was paid in, when the provider reports one (Telegram). */
  currency: string | null;
  /** When it arrived, when the provider reports it (TON). */
  receivedAt?: Date | null;
}

/** Whether a transaction pays an invoice, or why not. */
export type Verdict = 'pays' | UnmatchedReason;

/** A transaction that pays an invoice. */
export interface FoundPayment {
  ref: string;
  amount: bigint;
}

export interface FindPaymentOptions {
  /** Search these instead of asking the provider again (reconciliation fetches once). */
  transactions?: readonly ProviderTransaction[];
}

/**
 * The seam between billing and one way of being paid. Each invoice names its provider, and
 * everything about that invoice's payment goes through that provider alone.
 */
export abstract class PaymentProvider {
  abstract readonly kind: InvoiceProvider;

  /** Whether the settings this provider needs are present; reconciliation skips it otherwise. */
  isConfigured(): boolean {
    return true;
  }

  /** Whether invoices in this currency can be paid through this provider. */
  abstract supports(currency: string): boolean;

  /** Prices the invoice in the provider's unit and makes what the payer needs. */
  abstract createPayment(draft: InvoiceDraft, plan: PlanQuote): Promise<CreatedPayment>;

  /** Incoming payments to settle; the same list for every invoice (reconciliation). */
  abstract recentTransactions(): Promise<ProviderTransaction[]>;

  /** Whether this transaction pays this invoice (null: none carries its memo), or why not. */
  abstract verdict(
    transaction: ProviderTransaction,
    invoice: InvoiceRecord | null,
  ): Promise<Verdict>;

  /** After reconciliation confirmed what it could: records what each transaction came to. */
  settle(_transactions: readonly ProviderTransaction[]): Promise<void> {
    return Promise.resolve();
  }

  /** The transactions worth searching for one invoice; providers with an index override it. */
  protected transactionsFor(_invoice: InvoiceRecord): Promise<ProviderTransaction[]> {
    return this.recentTransactions();
  }

  /** Has this invoice been paid? The first transaction that pays it. */
  async findPayment(
    invoice: InvoiceRecord,
    options: FindPaymentOptions = {},
  ): Promise<FoundPayment | null> {
    const transactions = options.transactions ?? (await this.transactionsFor(invoice));
    for (const tx of transactions) {
      if ((await this.verdict(tx, invoice)) === 'pays') return { ref: tx.ref, amount: tx.amount };
    }
    return null;
  }
}

/** The DI token of every provider, in the order reconciliation visits them. */
export const PAYMENT_PROVIDER_LIST = Symbol('PAYMENT_PROVIDER_LIST');

/** Chooses the provider by the invoice's own `provider`, never a fixed one. */
@Injectable()
export class PaymentProviders {
  private readonly byKind: ReadonlyMap<InvoiceProvider, PaymentProvider>;

  constructor(@Inject(PAYMENT_PROVIDER_LIST) private readonly list: PaymentProvider[]) {
    this.byKind = new Map(list.map((provider) => [provider.kind, provider]));
  }

  get(kind: InvoiceProvider): PaymentProvider {
    const provider = this.byKind.get(kind);
    if (!provider) throw new Error(`no payment provider ${kind}`);
    return provider;
  }

  all(): readonly PaymentProvider[] {
    return this.list;
  }
}
