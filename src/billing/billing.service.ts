import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { isUUID } from 'class-validator';
import { AppError, validationFailed } from '../common/errors';
import { type Settings } from '../config/settings';
import { SETTINGS } from '../config/settings.module';
import { AccountsRepository } from '../users/accounts.repository';
import {
  type SubscriptionRecord,
  SubscriptionsRepository,
} from '../users/subscriptions.repository';
import { Transactional } from '@nestjs-cls/transactional';
import {
  INVOICE_REUSE_MIN_LEFT_MINUTES,
  INVOICE_TTL_HOURS,
  MAX_PENDING_INVOICES,
  TRIAL_PLAN_NAME,
} from './billing.constants';
import { CommentTakenCondition } from './billing.errors';
import { BillingRepository, type InvoiceFilter, type InvoiceRecord } from './billing.repository';
import { type Confirmation, ConfirmationService } from './confirmation.service';
import type { InvoiceProvider } from './entities/invoice.entity';
import { keysetPage, type Page, type PageQuery, pagePosition } from '../common/pagination';
import { RateLimiter, throttleKey } from '../common/throttling/rate-limiter';
import { isKnownCurrency } from './money';
import { PlansRepository } from './plans.repository';
import {
  type PaymentProvider,
  PaymentProviders,
  type PlanQuote,
} from './providers/payment-provider';

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
    private readonly users: AccountsRepository,
    private readonly subscriptions: SubscriptionsRepository,
    private readonly providers: PaymentProviders,
    private readonly confirmation: ConfirmationService,
    private readonly limiter: RateLimiter,
    @Inject(SETTINGS) private readonly settings: Settings,
  ) {}

  /**
   * A new invoice for an active plan in a currency it has a price in, priced by the chosen provider.
   * Nothing is written when the provider (or its exchange rate) is unavailable. A user holds at
   * most MAX_PENDING_INVOICES pending invoices, checked under a lock of the user's row before any
   * upstream is asked, so a refused order costs no upstream call even when many arrive at once.
   * A TON order of a plan the user already has a pending invoice for (same currency, with time
   * left to pay) answers that invoice: its amount, address and comment stay what the payer saw.
   */
  async createInvoice(
    userId: string,
    order: InvoiceOrder,
    clientAddress: string | null,
  ): Promise<InvoiceRecord> {
    // Seed accounts are free: the pending-invoice cap alone does not bound the upstream calls an
    // order makes. The bot's orders have no client address (Telegram relays them); an HTTP
    // order's is `throttleAddress`'s (an IPv6 client by its /64), as every throttle counts it.
    await this.limiter.hit('invoices', throttleKey('account', userId), 'invoicesPerAccount');
    if (clientAddress !== null) {
      const address = throttleKey('address', clientAddress);
      await this.limiter.hit('invoices', address, 'invoicesPerAddress');
    }
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
    const quote = {
      name: plan.name,
      durationDays: plan.durationDays,
      priceMinor: BigInt(plan.priceMinor),
    };
    // A clash of the random TON comment is astronomically rare; a fresh one settles it.
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await this.createWithinCap(userId, provider, order.currency, quote);
      } catch (error) {
        if (!(error instanceof CommentTakenCondition) || attempt >= 3) throw error;
      }
    }
  }

  /**
   * Under the lock of the user's row (one user's orders run one after another, so two at once
   * cannot both miss the pending invoice and make two): the pending invoice to reuse, the cap, then
   * the provider, then the insert.
   */
  @Transactional()
  private async createWithinCap(
    userId: string,
    provider: PaymentProvider,
    currency: string,
    quote: PlanQuote,
  ): Promise<InvoiceRecord> {
    if ((await this.users.lock([userId])).length === 0) {
      throw new AppError('NO_USER', 'user not found');
    }
    if (provider.kind === 'ton') {
      const order = { userId, planName: quote.name, currency, provider: provider.kind };
      const pending = await this.billing.reusableInvoice(order, INVOICE_REUSE_MIN_LEFT_MINUTES);
      if (pending) return pending;
    }
    if ((await this.billing.pendingInvoiceCount(userId)) >= MAX_PENDING_INVOICES) {
      throw tooManyPending();
    }
    const draft = { id: randomUUID(), userId, planName: quote.name, currency };
    const created = await provider.createPayment(draft, quote);
    return this.billing.insertInvoice({
      ...draft,
      provider: provider.kind,
      amount: created.amount,
      payment: created.payment,
      comment: created.comment,
      ttlHours: INVOICE_TTL_HOURS,
    });
  }

  async ownInvoices(userId: string, page: PageQuery): Promise<Page<InvoiceRecord>> {
    return this.invoicePage({ userId }, page);
  }

  async allInvoices(filter: InvoiceFilter, page: PageQuery): Promise<Page<InvoiceRecord>> {
    return this.invoicePage(filter, page);
  }

  /** The caller's own invoice; another user's is the same 404 as a missing one. */
  async ownInvoice(userId: string, invoiceId: string): Promise<InvoiceRecord> {
    const invoice = await this.billing.findInvoice(invoiceId);
    if (!invoice || invoice.userId !== userId) throw new AppError('NOT_FOUND', 'invoice not found');
    return invoice;
  }

  confirm(userId: string, invoiceId: string): Promise<Confirmation> {
    return this.confirmation.confirm(userId, invoiceId);
  }

  /** TRIAL_DAYS of access, once per Telegram account. */
  async startTrial(userId: string): Promise<SubscriptionRecord> {
    const started = await this.subscriptions.startTrial(
      userId,
      this.settings.trialDays,
      TRIAL_PLAN_NAME,
    );
    if (started) return started;
    const user = await this.users.findById(userId);
    if (user === null) throw new AppError('NO_USER', 'user not found');
    if (user.tgId === null) {
      throw new AppError('TRIAL_TELEGRAM_ONLY', 'a trial is for Telegram accounts only');
    }
    throw new AppError('TRIAL_USED', 'this account has already used its trial');
  }

  /**
   * Records a Telegram `successful_payment` (kept even if confirming fails, so reconciliation can
   * credit it later) and confirms the invoice as the paying account, through the same confirmation
   * as everything else. A repeated delivery of an already credited charge answers the same result.
   */
  async recordTelegramPayment(input: TelegramPaymentInput): Promise<Confirmation> {
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
    const payerId = (await this.users.findByTgId(tgId))?.id;
    if (!payerId) throw new AppError('NOT_FOUND', 'invoice not found');
    // This very charge pays the invoice, not whichever charge of it was recorded first: when two
    // charges arrive for one invoice, each is either the one credited or the one refunded.
    const charge = {
      ref: chargeId,
      amount: BigInt(amount),
      memo: invoiceId,
      currency: input.currency,
    };
    if ((await this.providers.get('telegram').verdict(charge, invoice)) !== 'pays') {
      throw new AppError('PAYMENT_NOT_FOUND', 'the charge does not pay this invoice');
    }
    try {
      return await this.confirmation.confirm(payerId, invoiceId, charge);
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

  private async currentResult(invoiceId: string, userId: string): Promise<Confirmation> {
    const invoice = await this.billing.findInvoice(invoiceId);
    const subscription = await this.subscriptions.subscriptionOf(userId);
    if (!invoice || !subscription) throw new AppError('NOT_FOUND', 'invoice not found');
    return { invoice, subscription };
  }

  private async invoicePage(filter: InvoiceFilter, query: PageQuery): Promise<Page<InvoiceRecord>> {
    const { after, limit } = pagePosition(query);
    return keysetPage(await this.billing.page(filter, after, limit + 1), limit);
  }
}

function tooManyPending(): AppError {
  return new AppError(
    'CONFLICT',
    `you already have ${MAX_PENDING_INVOICES} pending invoices: pay one, or wait until one expires`,
  );
}
