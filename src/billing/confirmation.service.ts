import { Inject, Injectable, Logger } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { AppError } from '../common/errors';
import { type Settings } from '../config/settings';
import { SETTINGS } from '../config/settings.module';
import { LATE_PAYMENT_DAYS } from './billing.constants';
import { TxRefUsedCondition } from './billing.errors';
import { BillingRepository, type InvoiceRecord } from './billing.repository';
import {
  type ConfirmationResponse,
  toInvoiceResponse,
  toSubscriptionView,
} from './dto/invoice.response';
import { commissionMinor } from './money';
import { type FoundPayment, PaymentProviders } from './providers/payment-provider';
import { SubscriptionsRepository } from './subscriptions.repository';

/** How many transactions a confirmation tries when the first ones turn out to be used already. */
const MAX_CANDIDATES = 3;

/**
 * The one way an invoice becomes paid, whoever asks: the user's confirm call, the bot's
 * `successful_payment`, or reconciliation.
 */
@Injectable()
export class ConfirmationService {
  private readonly logger = new Logger(ConfirmationService.name);

  constructor(
    private readonly billing: BillingRepository,
    private readonly subscriptions: SubscriptionsRepository,
    private readonly providers: PaymentProviders,
    @Inject(SETTINGS) private readonly settings: Settings,
  ) {}

  /**
   * Confirms the invoice for `callerId`, who must own it (anyone else gets the same 404 as for a
   * missing invoice, and nothing changes). The invoice's own provider is asked whether it has been
   * paid, unless reconciliation passes the payment it found with that provider (`known`). Then, in
   * one transaction: the invoice becomes paid exactly once, the subscription is extended, the
   * referral reward and then the partner commission are given.
   */
  async confirm(
    callerId: string,
    invoiceId: string,
    known?: FoundPayment,
  ): Promise<ConfirmationResponse> {
    const invoice = await this.billing.findInvoice(invoiceId);
    if (!invoice || invoice.userId !== callerId) {
      throw new AppError('NOT_FOUND', 'invoice not found');
    }
    if (!this.payable(invoice)) throw notPending();

    const provider = this.providers.get(invoice.provider);
    const exclude = new Set<string>();
    for (let attempt = 0; attempt < MAX_CANDIDATES; attempt += 1) {
      const payment = known ?? (await provider.findPayment(invoice, { exclude }));
      if (!payment) break;
      try {
        return await this.apply(invoice, payment);
      } catch (error) {
        if (!(error instanceof TxRefUsedCondition) || known) throw mapped(error);
        exclude.add(payment.ref);
      }
    }
    throw new AppError('PAYMENT_NOT_FOUND', 'no payment for this invoice has been found yet');
  }

  /** Pending, or expired recently enough that a late payment is still credited. */
  private payable(invoice: InvoiceRecord): boolean {
    if (invoice.status === 'pending') return true;
    const lateLimit = invoice.createdAt.getTime() + LATE_PAYMENT_DAYS * 86_400_000;
    return invoice.status === 'expired' && Date.now() < lateLimit;
  }

  private apply(invoice: InvoiceRecord, payment: FoundPayment): Promise<ConfirmationResponse> {
    return this.billing.transaction(async (tx) => {
      const links = await this.subscriptions.buyerLinks(tx, invoice.userId);
      if (!links) throw new AppError('NOT_FOUND', 'invoice not found');
      const referrerId =
        links.referrerId !== invoice.userId && this.settings.referralRewardDays > 0
          ? links.referrerId
          : null;
      // Serialises one buyer's confirmations, so "first paid invoice" is counted right.
      await this.subscriptions.lockUsers(
        tx,
        [invoice.userId, referrerId].filter((id): id is string => id !== null),
      );

      const paid = await this.subscriptions.markPaid(
        tx,
        invoice.id,
        invoice.userId,
        payment.ref,
        LATE_PAYMENT_DAYS,
      );
      if (!paid) throw notPending();

      const subscription = await this.subscriptions.extendForPlan(tx, paid.userId, paid.planName);
      if (referrerId) await this.rewardReferrer(tx, paid, referrerId);
      if (links.partnerId && links.partnerId !== paid.userId) {
        await this.payCommission(tx, paid, links.partnerId);
      }
      return { invoice: toInvoiceResponse(paid), subscription: toSubscriptionView(subscription) };
    });
  }

  /** The user-to-user referrer gets REFERRAL_REWARD_DAYS on the buyer's first paid invoice only. */
  private async rewardReferrer(
    tx: EntityManager,
    paid: InvoiceRecord,
    referrerId: string,
  ): Promise<void> {
    if ((await this.subscriptions.paidInvoiceCount(tx, paid.userId)) !== 1) return;
    await this.subscriptions.giveDays(
      tx,
      referrerId,
      this.settings.referralRewardDays,
      paid.planName,
    );
  }

  /**
   * The partner's commission, a separate step after the referral reward: the plan's price in the
   * invoice's currency (never the invoice amount, which for TON is nanotons) × the partner's
   * percent, rounded down to a whole minor unit. One per invoice.
   */
  private async payCommission(
    tx: EntityManager,
    paid: InvoiceRecord,
    partnerId: string,
  ): Promise<void> {
    const [price, percent] = [
      await this.subscriptions.planPrice(tx, paid.planName, paid.currency),
      await this.subscriptions.commissionPercent(tx, partnerId),
    ];
    if (price === null || percent === null) {
      this.logger.warn(
        `no commission on invoice ${paid.id}: ${price === null ? `plan ${paid.planName} has no ${paid.currency} price` : 'partner has no commission rate'}`,
      );
      return;
    }
    await this.subscriptions.insertCommission(tx, {
      partnerId,
      buyerId: paid.userId,
      invoiceId: paid.id,
      planName: paid.planName,
      currency: paid.currency,
      priceMinor: BigInt(price),
      percent,
      amountMinor: commissionMinor(BigInt(price), percent),
    });
  }
}

function notPending(): AppError {
  return new AppError('INVOICE_NOT_PENDING', 'the invoice is not pending');
}

/** A used transaction that reconciliation passed in counts as no payment at all. */
function mapped(error: unknown): unknown {
  return error instanceof TxRefUsedCondition
    ? new AppError('PAYMENT_NOT_FOUND', 'the payment found was already used for another invoice')
    : error;
}
