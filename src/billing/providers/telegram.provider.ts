import { Inject, Injectable, Logger } from '@nestjs/common';
import { AppError } from '../../common/errors';
import { type Settings } from '../../config/settings';
import { SETTINGS } from '../../config/settings.module';
import { LATE_PAYMENT_DAYS } from '../billing.constants';

import {
  BillingRepository,
  type InvoiceRecord,
  type TelegramPaymentRecord,
} from '../billing.repository';
import { isKnownCurrency, STARS_CURRENCY, TON_CURRENCY } from '../money';
import {
  type CreatedPayment,
  type InvoiceDraft,
  PaymentProvider,
  type PlanQuote,
  type ProviderTransaction,
  type Verdict,
} from './payment-provider';
import { asRecord, requestJson, UpstreamError } from './upstream';

/** Unpaid charges reconciliation looks at per run at most; the rest wait for the next run. */
const TELEGRAM_SETTLE_BATCH = 1_000;

/**
 * Payment inside Telegram: an invoice link made by the Bot API's `createInvoiceLink` with the
 * invoice id as payload, priced in minor units of the invoice's currency. The bot records each
 * `successful_payment`; those records are this provider's transactions.
 */
@Injectable()
export class TelegramProvider extends PaymentProvider {
  readonly kind = 'telegram' as const;
  private readonly logger = new Logger(TelegramProvider.name);

  constructor(
    @Inject(SETTINGS) private readonly settings: Settings,
    private readonly billing: BillingRepository,
  ) {
    super();
  }

  supports(currency: string): boolean {
    return currency !== TON_CURRENCY && isKnownCurrency(currency);
  }

  async createPayment(draft: InvoiceDraft, plan: PlanQuote): Promise<CreatedPayment> {
    const token = this.settings.botToken;
    // Stars are paid to the bot itself: Telegram wants an empty provider token for them.
    const providerToken =
      draft.currency === STARS_CURRENCY ? '' : this.settings.telegramPaymentProviderToken;
    if (!token || providerToken === null) {
      throw new AppError('UPSTREAM_UNAVAILABLE', 'Telegram payments are not configured');
    }
    const amount = plan.priceMinor;
    const request = {
      title: `Plan ${plan.name}`.slice(0, 32),
      description: `${plan.durationDays} days of access`,
      payload: draft.id,
      provider_token: providerToken,
      currency: draft.currency,
      prices: [{ label: plan.name, amount: Number(amount) }],
    };
    const link = await this.callBotApi(token, 'createInvoiceLink', request);
    if (typeof link !== 'string' || link === '') {
      this.logger.warn('createInvoiceLink answered without a link');
      throw new AppError('UPSTREAM_UNAVAILABLE', 'Telegram could not make the invoice link');
    }
    return { amount, comment: null, payment: { invoice_link: link } };
  }

  /** Gives a Stars charge back to its payer (`refundStarPayment`). False when Telegram refused. */
  async refundStars(tgId: string, chargeId: string): Promise<boolean> {
    const token = this.settings.botToken;
    if (!token) return false;
    try {
      const done = await this.callBotApi(token, 'refundStarPayment', {
        user_id: Number(tgId),
        telegram_payment_charge_id: chargeId,
      });
      return done === true;
    } catch (error) {
      if (error instanceof AppError) return false;
      throw error;
    }
  }

  /** One Bot API method; its `result`. Failures are logged without the URL (it holds the token). */
  private async callBotApi(token: string, method: string, request: object): Promise<unknown> {
    let answer: unknown;
    try {
      answer = await requestJson(`${this.settings.telegramApiRoot}/bot${token}/${method}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(request),
      });
    } catch (error) {
      const detail =
        error instanceof UpstreamError
          ? `${error.message} ${String(asRecord(error.body)?.description ?? '')}`
          : String(error);
      this.logger.warn(`${method} failed: ${detail.trim()}`);
      throw new AppError('UPSTREAM_UNAVAILABLE', `Telegram refused ${method}`);
    }
    return asRecord(answer)?.ok === true ? asRecord(answer)?.result : null;
  }

  async recentTransactions(): Promise<ProviderTransaction[]> {
    return (
      await this.billing.recentTelegramPayments(LATE_PAYMENT_DAYS, TELEGRAM_SETTLE_BATCH)
    ).map(toTransaction);
  }

  protected override async transactionsFor(invoice: InvoiceRecord): Promise<ProviderTransaction[]> {
    return (await this.billing.telegramPaymentsFor(invoice.id)).map(toTransaction);
  }

  verdict(tx: ProviderTransaction, invoice: InvoiceRecord | null): Promise<Verdict> {
    if (!invoice || tx.memo !== invoice.id) return Promise.resolve('no_invoice');
    const enough = tx.currency === invoice.currency && tx.amount >= BigInt(invoice.amount);
    return Promise.resolve(enough ? 'pays' : 'underpaid');
  }
}

function toTransaction(payment: TelegramPaymentRecord): ProviderTransaction {
  return {
    ref: payment.chargeId,
    amount: BigInt(payment.totalAmount),
    memo: payment.invoiceId,
    currency: payment.currency,
  };
}
