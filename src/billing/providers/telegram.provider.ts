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
import { isKnownCurrency, TON_CURRENCY } from '../money';
import {
  type CreatedPayment,
  type InvoiceDraft,
  PaymentProvider,
  type PlanQuote,
  type ProviderTransaction,
} from './payment-provider';
import { asRecord, requestJson, UpstreamError } from './upstream';

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
    const providerToken = this.settings.telegramPaymentProviderToken;
    if (!token || !providerToken) {
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
    let answer: unknown;
    try {
      answer = await requestJson(`${this.settings.telegramApiRoot}/bot${token}/createInvoiceLink`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(request),
      });
    } catch (error) {
      const detail =
        error instanceof UpstreamError
          ? `${error.message} ${String(asRecord(error.body)?.description ?? '')}`
          : String(error);
      this.logger.warn(`createInvoiceLink failed: ${detail.trim()}`);
      throw new AppError('UPSTREAM_UNAVAILABLE', 'Telegram could not make the invoice link');
    }
    const link = asRecord(answer)?.ok === true ? asRecord(answer)?.result : null;
    if (typeof link !== 'string' || link === '') {
      this.logger.warn('createInvoiceLink answered without a link');
      throw new AppError('UPSTREAM_UNAVAILABLE', 'Telegram could not make the invoice link');
    }
    return { amount, comment: null, payment: { invoice_link: link } };
  }

  async recentTransactions(): Promise<ProviderTransaction[]> {
    return (await this.billing.recentTelegramPayments(LATE_PAYMENT_DAYS)).map(toTransaction);
  }

  protected override async transactionsFor(invoice: InvoiceRecord): Promise<ProviderTransaction[]> {
    return (await this.billing.telegramPaymentsFor(invoice.id)).map(toTransaction);
  }

  pays(tx: ProviderTransaction, invoice: InvoiceRecord): boolean {
    return (
      tx.memo === invoice.id &&
      tx.currency === invoice.currency &&
      tx.amount >= BigInt(invoice.amount)
    );
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
