import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { isUUID } from 'class-validator';
import { AppError, validationFailed } from '../common/errors';
import { type Settings } from '../config/settings';
import { SETTINGS } from '../config/settings.module';
import type { SubscriptionView } from '../users/dto/user.response';
import { INVOICE_TTL_HOURS, MAX_PENDING_INVOICES, TRIAL_PLAN_NAME } from './billing.constants';
import { CommentTakenCondition } from './billing.errors';
import {
  BillingRepository,
  type InvoiceFilter,
  type InvoiceRecord,
  type ListedInvoice,
  type NewInvoice,
} from './billing.repository';
import { ConfirmationService } from './confirmation.service';
import {
  type ConfirmationResponse,
  type InvoicePageResponse,
  type InvoiceResponse,
  toInvoiceResponse,
  toSubscriptionView,
} from './dto/invoice.response';
import type { InvoiceProvider } from './entities/invoice.entity';
import { decodeCursor, encodeCursor, DEFAULT_PAGE_LIMIT } from '../common/pagination';
import { isKnownCurrency } from './money';
import { PlansRepository } from './plans.repository';
import { PaymentProviders } from './providers/payment-provider';
import { SubscriptionsRepository } from './subscriptions.repository';

export interface PageRequest {
  limit?: number;
  cursor?: string;
}

export interface InvoiceOrder {
  planName: string;
  currency: string;
  provider: InvoiceProvider;
}

/** A Telegram `successful_payment`, as the bot hands it over. */
export interface TelegramPaymentInput {
  /** The invoice payload: our invoice id. */
  invoiceId: string;
  userTgId: number | string;
  currency: string;
  totalAmount: number | string | bigint;
  telegramPaymentChargeId: string;
}

/** Invoices, the trial, and the bot's Telegram payments. */
@Injectable()
export class BillingService {
  constructor(
    private readonly billing: BillingRepository,
    private readonly plans: PlansRepository,
    private readonly subscriptions: SubscriptionsRepository,
    private readonly providers: PaymentProviders,
    private readonly confirmation: ConfirmationService,
    @Inject(SETTINGS) private readonly settings: Settings,
  ) {}

  /**
   * A new invoice for an active plan in a currency it has a price in, priced by the chosen provider.
   * Nothing is written when the provider (or its exchange rate) is unavailable. A user holds at
   * most MAX_PENDING_INVOICES pending invoices: checked before the provider is asked (so a refused
   * order costs no upstream call) and again, under a lock of the user's row, where it is written.
   */
  async createInvoice(userId: string, order: InvoiceOrder): Promise<InvoiceResponse> {
    const provider = this.providers.get(order.provider);
    if (!isKnownCurrency(order.currency) || !provider.supports(order.currency)) {
      throw validationFailed([
        { field: 'currency', message: `${order.currency} cannot be paid with ${order.provider}` },
      ]);
    }
    const plan = await this.plans.planForPurchase(order.planName, order.currency);
    if (!plan || !plan.active) {
      throw validationFailed([{ field: 'plan_name', message: 'no such plan on sale' }]);
    }
    if (plan.priceMinor === null) {
      throw validationFailed([
        { field: 'currency', message: `plan ${plan.name} has no price in ${order.currency}` },
      ]);
    }
    if ((await this.billing.pendingInvoiceCount(userId)) >= MAX_PENDING_INVOICES) {
      throw tooManyPending();
    }
    const quote = {
      name: plan.name,
      durationDays: plan.durationDays,
      priceMinor: BigInt(plan.priceMinor),
    };
    // A clash of the random TON comment is astronomically rare; a fresh one settles it.
    for (let attempt = 1; ; attempt += 1) {
      const draft = { id: randomUUID(), userId, planName: plan.name, currency: order.currency };
      const created = await provider.createPayment(draft, quote);
      try {
        return toInvoiceResponse(
          await this.insertWithinCap({
            ...draft,
            provider: provider.kind,
            amount: created.amount,
            payment: created.payment,
            comment: created.comment,
            ttlHours: INVOICE_TTL_HOURS,
          }),
        );
      } catch (error) {
        if (!(error instanceof CommentTakenCondition) || attempt >= 3) throw error;
      }
    }
  }

  /** Writes the invoice unless its user already holds the most pending invoices allowed. */
  private insertWithinCap(invoice: NewInvoice): Promise<InvoiceRecord> {
    return this.billing.transaction(async (tx) => {
      if (!(await this.billing.lockUser(tx, invoice.userId))) {
        throw new AppError('NO_USER', 'user not found');
      }
      if ((await this.billing.pendingInvoiceCount(invoice.userId, tx)) >= MAX_PENDING_INVOICES) {
        throw tooManyPending();
      }
      return this.billing.insertInvoice(invoice, tx);
    });
  }

  async ownInvoices(userId: string, page: PageRequest): Promise<InvoicePageResponse> {
    return this.invoicePage({ userId }, page);
  }

  async allInvoices(filter: InvoiceFilter, page: PageRequest): Promise<InvoicePageResponse> {
    return this.invoicePage(filter, page);
  }

  /** The caller's own invoice; another user's is the same 404 as a missing one. */
  async ownInvoice(userId: string, invoiceId: string): Promise<InvoiceResponse> {
    const invoice = await this.billing.findInvoice(invoiceId);
    if (!invoice || invoice.userId !== userId) throw new AppError('NOT_FOUND', 'invoice not found');
    return toInvoiceResponse(invoice);
  }

  confirm(userId: string, invoiceId: string): Promise<ConfirmationResponse> {
    return this.confirmation.confirm(userId, invoiceId);
  }

  /** TRIAL_DAYS of access, once per Telegram account. */
  async startTrial(userId: string): Promise<SubscriptionView> {
    const started = await this.subscriptions.startTrial(
      userId,
      this.settings.trialDays,
      TRIAL_PLAN_NAME,
    );
    if (started) return toSubscriptionView(started);
    const telegram = await this.subscriptions.isTelegramAccount(userId);
    if (telegram === null) throw new AppError('NO_USER', 'user not found');
    if (!telegram) {
      throw new AppError('TRIAL_TELEGRAM_ONLY', 'a trial is for Telegram accounts only');
    }
    throw new AppError('TRIAL_USED', 'this account has already used its trial');
  }

  /**
   * Records a Telegram `successful_payment` (kept even if confirming fails, so reconciliation can
   * credit it later) and confirms the invoice as the paying account, through the same confirmation
   * as everything else. A repeated delivery of an already credited charge answers the same result.
   */
  async recordTelegramPayment(input: TelegramPaymentInput): Promise<ConfirmationResponse> {
    const chargeId = input.telegramPaymentChargeId;
    const tgId = String(input.userTgId);
    const amount = String(input.totalAmount);
    if (!isUUID(input.invoiceId) || !/^\d{1,19}$/.test(tgId) || !/^\d{1,18}$/.test(amount)) {
      throw new AppError('NOT_FOUND', 'invoice not found');
    }
    if (typeof chargeId !== 'string' || chargeId === '' || chargeId.length > 255) {
      throw validationFailed([{ field: 'telegram_payment_charge_id', message: 'missing' }]);
    }
    const invoiceId = input.invoiceId.toLowerCase();
    const invoice = await this.billing.findInvoice(invoiceId);
    if (!invoice || invoice.provider !== 'telegram') {
      throw new AppError('NOT_FOUND', 'invoice not found');
    }
    await this.billing.recordTelegramPayment({
      chargeId,
      invoiceId,
      tgId,
      currency: input.currency,
      totalAmount: amount,
    });
    const payerId = await this.subscriptions.userIdByTgId(tgId);
    if (!payerId) throw new AppError('NOT_FOUND', 'invoice not found');
    try {
      return await this.confirmation.confirm(payerId, invoiceId);
    } catch (error) {
      const again = await this.billing.findInvoice(invoiceId);
      if (
        error instanceof AppError &&
        error.code === 'INVOICE_NOT_PENDING' &&
        again?.providerTxRef === chargeId &&
        again.userId === payerId
      ) {
        return this.currentResult(again.id, payerId);
      }
      throw error;
    }
  }

  private async currentResult(invoiceId: string, userId: string): Promise<ConfirmationResponse> {
    const invoice = await this.billing.findInvoice(invoiceId);
    const subscription = await this.subscriptions.subscriptionOf(userId);
    if (!invoice || !subscription) throw new AppError('NOT_FOUND', 'invoice not found');
    return { invoice: toInvoiceResponse(invoice), subscription: toSubscriptionView(subscription) };
  }

  private async invoicePage(
    filter: InvoiceFilter,
    page: PageRequest,
  ): Promise<InvoicePageResponse> {
    const limit = page.limit ?? DEFAULT_PAGE_LIMIT;
    const after = page.cursor === undefined ? null : decodeCursor(page.cursor);
    if (page.cursor !== undefined && after === null) {
      throw validationFailed([{ field: 'cursor', message: 'not a cursor from this list' }]);
    }
    const rows = await this.billing.page(filter, after, limit + 1);
    const items = rows.slice(0, limit);
    const last: ListedInvoice | undefined = items[items.length - 1];
    return {
      items: items.map(toInvoiceResponse),
      next_cursor:
        rows.length > limit && last ? encodeCursor({ at: last.sortKey, id: last.id }) : null,
    };
  }
}

function tooManyPending(): AppError {
  return new AppError(
    'CONFLICT',
    `you already have ${MAX_PENDING_INVOICES} pending invoices: pay one, or wait until one expires`,
  );
}
