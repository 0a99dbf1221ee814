import { Inject, Injectable, Logger } from '@nestjs/common';
import { Transactional } from '@nestjs-cls/transactional';
import { AppError } from '../common/errors';
import { type Settings } from '../config/settings';
import { SETTINGS } from '../config/settings.module';
import { AccountsRepository } from '../users/accounts.repository';
import { ReferralsRepository } from '../users/referrals.repository';
import {
  type SubscriptionRecord,
  SubscriptionsRepository,
} from '../users/subscriptions.repository';
import { LATE_PAYMENT_DAYS } from './billing.constants';
import { TxRefUsedCondition } from './billing.errors';
import { BillingRepository, type InvoiceRecord } from './billing.repository';
import { CommissionsRepository } from './commissions.repository';
import { commissionMinor } from './money';
import { PlansRepository } from './plans.repository';
import { type FoundPayment, PaymentProviders } from './providers/payment-provider';

export interface ConfirmOptions {
  /** Staff attaching a payment by hand: an expired invoice of any age may be paid. */
  byStaff?: boolean;
}

/** A paid invoice and the subscription it extended. */
export interface Confirmation {
  invoice: InvoiceRecord;
  subscription: SubscriptionRecord;
}

/**
 * The one way an invoice becomes paid, whoever asks: the user's confirm call, the bot's
 * `successful_payment`, or reconciliation.
 */
@Injectable()
export class ConfirmationService {
  private readonly logger = new Logger(ConfirmationService.name);

  constructor(
    private readonly billing: BillingRepository,
    private readonly users: AccountsRepository,
    private readonly subscriptions: SubscriptionsRepository,
    private readonly referrals: ReferralsRepository,
    private readonly plans: PlansRepository,
    private readonly commissions: CommissionsRepository,
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
    options: ConfirmOptions = {},
  ): Promise<Confirmation> {
    const invoice = await this.billing.findInvoice(invoiceId);
    if (!invoice || invoice.userId !== callerId) {
      throw new AppError('NOT_FOUND', 'invoice not found');
    }
    const lateDays = options.byStaff ? null : LATE_PAYMENT_DAYS;
    if (!payable(invoice, lateDays)) throw notPending();

    const payment = known ?? (await this.providers.get(invoice.provider).findPayment(invoice));
    if (!payment) {
      // Paid meanwhile (by reconciliation, or another call): its payment is no longer waiting.
      const now = await this.billing.findInvoice(invoiceId);
      if (now && !payable(now, lateDays)) throw notPending();
      throw new AppError('PAYMENT_NOT_FOUND', 'no payment for this invoice has been found yet');
    }
    try {
      return await this.apply(invoice, payment, lateDays);
    } catch (error) {
      throw mapped(error);
    }
  }

  /**
   * Everything a payment does commits together or not at all. A payment that already paid another
   * invoice is not followed by a search for another one: TON comments and Telegram payloads are
   * unique per invoice, so only a transfer meant for this invoice can pay it.
   */
  @Transactional()
  private async apply(
    invoice: InvoiceRecord,
    payment: FoundPayment,
    lateDays: number | null,
  ): Promise<Confirmation> {
    const links = await this.referrals.buyerLinks(invoice.userId);
    if (!links) throw new AppError('NOT_FOUND', 'invoice not found');
    const referrerId =
      links.referrerId !== invoice.userId && this.settings.referralRewardDays > 0
        ? links.referrerId
        : null;
    // Serialises one buyer's confirmations, so "first paid invoice" is counted right.
    await this.users.lock([invoice.userId, referrerId].filter((id): id is string => id !== null));

    const paid = await this.billing.markPaid(invoice.id, invoice.userId, payment.ref, lateDays);
    if (!paid) throw notPending();

    const subscription = await this.subscriptions.extendForPlan(paid.userId, paid.planName);
    if (referrerId) await this.rewardReferrer(paid, referrerId);
    if (links.partnerId && links.partnerId !== paid.userId) {
      await this.payCommission(paid, links.partnerId, links.partnerPercent);
    }
    return { invoice: paid, subscription };
  }

  /** The user-to-user referrer gets REFERRAL_REWARD_DAYS on the buyer's first paid invoice only. */
  private async rewardReferrer(paid: InvoiceRecord, referrerId: string): Promise<void> {
    if ((await this.billing.paidInvoiceCount(paid.userId)) !== 1) return;
    await this.subscriptions.giveDays(referrerId, this.settings.referralRewardDays, paid.planName);
  }

  /**
   * The partner's commission, a separate step after the referral reward: the plan's price in the
   * invoice's currency (never the invoice amount, which for TON is nanotons) × the partner's
   * percent, rounded down to a whole minor unit. One per invoice.
   */
  private async payCommission(
    paid: InvoiceRecord,
    partnerId: string,
    percent: string | null,
  ): Promise<void> {
    const price = await this.plans.priceOf(paid.planName, paid.currency);
    if (price === null || percent === null) {
      this.logger.warn(
        `no commission on invoice ${paid.id}: ${price === null ? `plan ${paid.planName} has no ${paid.currency} price` : 'partner has no commission rate'}`,
      );
      return;
    }
    await this.commissions.insert({
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

/** Pending, or expired recently enough (`lateDays`; null: any age) to be paid late. */
function payable(invoice: InvoiceRecord, lateDays: number | null): boolean {
  if (invoice.status === 'pending') return true;
  if (invoice.status !== 'expired') return false;
  return lateDays === null || Date.now() < invoice.createdAt.getTime() + lateDays * 86_400_000;
}

function notPending(): AppError {
  return new AppError('INVOICE_NOT_PENDING', 'the invoice is not pending');
}

/** A payment that already paid another invoice counts as no payment at all. */
function mapped(error: unknown): unknown {
  return error instanceof TxRefUsedCondition
    ? new AppError('PAYMENT_NOT_FOUND', 'the payment found was already used for another invoice')
    : error;
}
