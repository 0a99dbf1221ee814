import type { PlanDisplayTexts } from '../billing/plan-display';
import { Inject, Injectable } from '@nestjs/common';
import { BillingService } from '../billing/billing.service';
import { STARS_CURRENCY, TON_CURRENCY } from '../billing/money';
import { PlansService } from '../billing/plans.service';
import {
  type CheckoutQuery,
  type CheckoutVerdict,
  type TelegramPaymentOutcome,
  TelegramPaymentsService,
} from '../billing/telegram-payments.service';
import type { TelegramPaymentInput } from '../billing/billing.service';
import { AppError } from '../common/errors';
import { type Settings } from '../config/settings';
import { SETTINGS } from '../config/settings.module';
import { UsersService } from '../users/users.service';
import type { BotUser } from './bot-accounts.service';
import type { PaymentMethod } from './callback-data';

export interface PlanChoice {
  name: string;
  durationDays: number;
  display: PlanDisplayTexts;
}

/** A way to pay for a plan, with its price in minor units of its currency (TON: converted later). */
export interface MethodChoice {
  method: PaymentMethod;
  price: string;
}

/** What the bot shows or sends for a new invoice. */
export type BotInvoice =
  | {
      kind: 'ton';
      invoiceId: string;
      amountNano: string;
      address: string;
      comment: string;
      link: string;
    }
  | {
      kind: 'telegram';
      invoiceId: string;
      plan: PlanChoice;
      currency: string;
      amount: number;
      /** Empty for Stars, as Telegram wants it. */
      providerToken: string;
    };

export type PaidOutcome =
  | { kind: 'confirmed'; planName: string; expiresAt: Date }
  | { kind: 'not_found' }
  | { kind: 'already_paid' }
  | { kind: 'unknown' };

/** Fiat prices offered for card payment on one screen. */
const MAX_CARD_CURRENCIES = 3;

/** Buying in the bot: plans, the payment-method choice, invoices, and Telegram's checkout. */
@Injectable()
export class BotShopService {
  constructor(
    private readonly plansService: PlansService,
    private readonly billing: BillingService,
    private readonly telegramPayments: TelegramPaymentsService,
    private readonly users: UsersService,
    @Inject(SETTINGS) private readonly settings: Settings,
  ) {}

  async plans(): Promise<PlanChoice[]> {
    return (await this.plansService.activePlans()).map((plan) => ({
      name: plan.name,
      durationDays: plan.durationDays,
      display: plan.display,
    }));
  }

  /**
   * The methods a plan can be paid with now: TON when a wallet is set (priced in USD when the plan
   * has it, else its first fiat price), card through the payment provider when its token is set
   * (one button per fiat price), and Stars when the plan has an XTR price. Null: not on sale.
   */
  async paymentChoices(
    planName: string,
  ): Promise<{ plan: PlanChoice; methods: MethodChoice[] } | null> {
    const plan = (await this.plansService.activePlans()).find((p) => p.name === planName);
    if (!plan) return null;
    const fiat = Object.keys(plan.prices)
      .filter((currency) => currency !== STARS_CURRENCY && currency !== TON_CURRENCY)
      .sort((a, b) => (a === 'USD' ? -1 : b === 'USD' ? 1 : a.localeCompare(b)));
    const methods: MethodChoice[] = [];
    if (this.settings.tonWalletAddress && fiat.length > 0) {
      methods.push({ method: { kind: 'ton', currency: fiat[0] }, price: plan.prices[fiat[0]] });
    }
    if (this.settings.telegramPaymentProviderToken) {
      for (const currency of fiat.slice(0, MAX_CARD_CURRENCIES)) {
        methods.push({ method: { kind: 'card', currency }, price: plan.prices[currency] });
      }
    }
    const stars = plan.prices[STARS_CURRENCY];
    if (stars) methods.push({ method: { kind: 'stars' }, price: stars });
    return {
      plan: { name: plan.name, durationDays: plan.durationDays, display: plan.display },
      methods,
    };
  }

  /** A new invoice for the plan with that method, made by the same billing as the HTTP route. */
  async buy(from: BotUser, planName: string, method: PaymentMethod): Promise<BotInvoice> {
    const choices = await this.paymentChoices(planName);
    if (!choices) throw new AppError('NOT_FOUND', 'no such plan on sale');
    const user = await this.users.telegramAccount(from.tgId, from.username);
    const currency = method.kind === 'stars' ? STARS_CURRENCY : method.currency;
    const invoice = await this.billing.createInvoice(
      user.id,
      { planName, currency, provider: method.kind === 'ton' ? 'ton' : 'telegram' },
      null,
    );
    const payment = invoice.payment as unknown as Record<string, string>;
    if (method.kind === 'ton') {
      return {
        kind: 'ton',
        invoiceId: invoice.id,
        amountNano: payment.amount_nano,
        address: payment.address,
        comment: payment.comment,
        link: payment.link,
      };
    }
    return {
      kind: 'telegram',
      invoiceId: invoice.id,
      plan: choices.plan,
      currency,
      amount: Number(invoice.amount),
      providerToken:
        currency === STARS_CURRENCY ? '' : (this.settings.telegramPaymentProviderToken ?? ''),
    };
  }

  /** "I paid": the one confirmation, as the invoice's owner. */
  async confirmPaid(from: BotUser, invoiceId: string): Promise<PaidOutcome> {
    const user = await this.users.telegramAccount(from.tgId, from.username);
    try {
      const { subscription } = await this.billing.confirm(user.id, invoiceId);
      return {
        kind: 'confirmed',
        planName: subscription.planName,
        expiresAt: subscription.expiresAt,
      };
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      if (error.code === 'PAYMENT_NOT_FOUND') return { kind: 'not_found' };
      if (error.code === 'INVOICE_NOT_PENDING') return { kind: 'already_paid' };
      if (error.code === 'NOT_FOUND') return { kind: 'unknown' };
      throw error;
    }
  }

  checkCheckout(query: CheckoutQuery): Promise<CheckoutVerdict> {
    return this.telegramPayments.checkCheckout(query);
  }

  settle(payment: TelegramPaymentInput): Promise<TelegramPaymentOutcome> {
    return this.telegramPayments.settle(payment);
  }
}
