import { Injectable, Logger } from '@nestjs/common';
import { isUUID } from 'class-validator';
import { AppError } from '../common/errors';
import { BillingRepository } from './billing.repository';
import { BillingService, type TelegramPaymentInput } from './billing.service';
import { Clock } from './clock';
import { STARS_CURRENCY } from './money';
import { AccountsRepository } from '../users/accounts.repository';
import { TelegramProvider } from './providers/telegram.provider';

/** A Telegram `pre_checkout_query`, as the bot hands it over. */
export interface CheckoutQuery {
  invoiceId: string;
  userTgId: number;
  currency: string;
  totalAmount: number;
}

export type CheckoutRefusal = 'unknown_invoice' | 'not_pending' | 'wrong_price';
export type CheckoutVerdict = { ok: true } | { ok: false; reason: CheckoutRefusal };

/** What became of a `successful_payment`. */
export type TelegramPaymentOutcome =
  /** This charge paid the invoice (now, or on an earlier delivery of the same update). */
  | { kind: 'credited'; planName: string; expiresAt: Date }
  /** The charge could not pay its invoice (paid already, too late): the Stars were given back. */
  | { kind: 'refunded' }
  /** The charge could not pay its invoice: recorded for staff to refund by hand. */
  | { kind: 'refund_by_staff' };

/**
 * Telegram's side of the checkout: the answer to `pre_checkout_query`, and what a
 * `successful_payment` does. A charge is credited once through the one confirmation; a second
 * charge for an invoice already paid is never credited, but refunded.
 */
@Injectable()
export class TelegramPaymentsService {
  private readonly logger = new Logger(TelegramPaymentsService.name);

  constructor(
    private readonly billingService: BillingService,
    private readonly billing: BillingRepository,
    private readonly users: AccountsRepository,
    private readonly telegram: TelegramProvider,
    private readonly clock: Clock,
  ) {}

  /**
   * Telegram asks before it charges: yes only for a pending telegram invoice of this Telegram
   * account, in the same currency and amount. Another account's invoice looks like a missing one.
   */
  async checkCheckout(query: CheckoutQuery): Promise<CheckoutVerdict> {
    const invoice = isUUID(query.invoiceId)
      ? await this.billing.findInvoice(query.invoiceId.toLowerCase())
      : null;
    const payerId = (await this.users.findByTgId(query.userTgId))?.id ?? null;
    if (!invoice || invoice.provider !== 'telegram' || payerId === null) {
      return { ok: false, reason: 'unknown_invoice' };
    }
    if (invoice.userId !== payerId) return { ok: false, reason: 'unknown_invoice' };
    if (invoice.status !== 'pending' || invoice.expiresAt.getTime() <= this.clock.now()) {
      return { ok: false, reason: 'not_pending' };
    }
    if (invoice.currency !== query.currency || invoice.amount !== String(query.totalAmount)) {
      return { ok: false, reason: 'wrong_price' };
    }
    return { ok: true };
  }

  /** Records and confirms the charge; a charge that cannot pay its invoice is refunded. */
  async settle(payment: TelegramPaymentInput): Promise<TelegramPaymentOutcome> {
    try {
      const { subscription } = await this.billingService.recordTelegramPayment(payment);
      return {
        kind: 'credited',
        planName: subscription.planName,
        expiresAt: subscription.expiresAt,
      };
    } catch (error) {
      // Recorded, but it cannot pay its invoice: another charge paid it, it is past its late
      // window, or (pre-checkout should prevent it) the charge has another currency or amount.
      if (
        error instanceof AppError &&
        (error.code === 'INVOICE_NOT_PENDING' || error.code === 'PAYMENT_NOT_FOUND')
      ) {
        return this.refund(payment);
      }
      throw error;
    }
  }

  private async refund(payment: TelegramPaymentInput): Promise<TelegramPaymentOutcome> {
    const chargeId = payment.telegramPaymentChargeId;
    if (payment.currency !== STARS_CURRENCY) {
      await this.billing.markDuplicateCharge(chargeId);
      this.logger.warn(
        `charge ${chargeId} not credited to invoice ${payment.invoiceId}: staff refund`,
      );
      return { kind: 'refund_by_staff' };
    }
    // Claimed once: a repeated delivery of the same update does not ask Telegram again.
    if (!(await this.billing.claimDuplicateRefund(chargeId))) return { kind: 'refunded' };
    if (await this.telegram.refundStars(String(payment.userTgId), chargeId)) {
      return { kind: 'refunded' };
    }
    await this.billing.releaseDuplicateRefund(chargeId);
    this.logger.warn(`Stars refund of charge ${chargeId} failed: staff refund`);
    return { kind: 'refund_by_staff' };
  }
}
