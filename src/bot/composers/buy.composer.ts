import { Injectable } from '@nestjs/common';
import { Composer, InlineKeyboard } from 'grammy';
import { formatMinor } from '../../billing/money';
import { planTitle } from '../../billing/plan-display';
import {
  BotShopService,
  type BotInvoice,
  type MethodChoice,
  type PlanChoice,
} from '../bot-shop.service';
import { CALLBACK, CALLBACK_PATTERN, decodeMethod, encodeMethod } from '../callback-data';
import { type BotContext, formatTime, pickLocale } from '../i18n';
import { botUser } from './from';

/** Buying: plans, the payment-method choice, TON or a Telegram invoice, and Telegram's checkout. */
@Injectable()
export class BuyComposer {
  readonly composer = new Composer<BotContext>();

  constructor(shop: BotShopService) {
    const c = this.composer;

    const showPlans = async (ctx: BotContext, inPlace: boolean) => {
      const plans = await shop.plans();
      const keyboard = new InlineKeyboard();
      for (const plan of plans) {
        keyboard
          .text(
            ctx.t('plan-button', { name: titleOf(ctx, plan), days: plan.durationDays }),
            CALLBACK.plan(plan.name),
          )
          .row();
      }
      const text = ctx.t(plans.length > 0 ? 'plans-title' : 'plans-empty');
      if (inPlace) await ctx.editMessageText(text, { reply_markup: keyboard });
      else await ctx.reply(text, { reply_markup: keyboard });
    };

    c.command('plans', (ctx) => showPlans(ctx, false));

    c.callbackQuery(CALLBACK_PATTERN.plans, async (ctx) => {
      await ctx.answerCallbackQuery();
      await showPlans(ctx, ctx.match[1] !== undefined);
    });

    c.callbackQuery(CALLBACK_PATTERN.plan, async (ctx) => {
      const choices = await shop.paymentChoices(ctx.match[1]);
      await ctx.answerCallbackQuery();
      if (!choices) {
        await ctx.editMessageText(ctx.t('plan-gone'));
        return;
      }
      const { plan, methods } = choices;
      const keyboard = new InlineKeyboard();
      for (const choice of methods) {
        keyboard
          .text(methodLabel(ctx, choice), CALLBACK.buy(plan.name, encodeMethod(choice.method)))
          .row();
      }
      keyboard.text(ctx.t('button-back'), CALLBACK.plansBack);
      const text = methods.length > 0 ? 'plan-methods' : 'plan-no-methods';
      await ctx.editMessageText(
        ctx.t(text, { name: titleOf(ctx, plan), days: plan.durationDays }),
        {
          reply_markup: keyboard,
        },
      );
    });

    c.callbackQuery(CALLBACK_PATTERN.buy, async (ctx) => {
      const invoice = await shop.buy(botUser(ctx.from), ctx.match[1], decodeMethod(ctx.match[2]));
      await ctx.answerCallbackQuery();
      await sendInvoice(ctx, invoice);
    });

    c.callbackQuery(CALLBACK_PATTERN.paid, async (ctx) => {
      const outcome = await shop.confirmPaid(botUser(ctx.from), ctx.match[1]);
      await ctx.answerCallbackQuery();
      if (outcome.kind === 'confirmed') {
        await ctx.reply(
          ctx.t('paid-confirmed', { plan: outcome.planName, until: formatTime(outcome.expiresAt) }),
        );
      } else {
        await ctx.reply(ctx.t(PAID_TEXT[outcome.kind]));
      }
    });

    // Telegram waits at most 10 s for this answer: one read, nothing else.
    c.on('pre_checkout_query', async (ctx) => {
      const query = ctx.preCheckoutQuery;
      const verdict = await shop.checkCheckout({
        invoiceId: query.invoice_payload,
        userTgId: query.from.id,
        currency: query.currency,
        totalAmount: query.total_amount,
      });
      if (verdict.ok) await ctx.answerPreCheckoutQuery(true);
      else await ctx.answerPreCheckoutQuery(false, ctx.t(`checkout-${verdict.reason}`));
    });

    c.on('message:successful_payment', async (ctx) => {
      const payment = ctx.message.successful_payment;
      const outcome = await shop.settle({
        invoiceId: payment.invoice_payload,
        userTgId: ctx.from.id,
        currency: payment.currency,
        totalAmount: payment.total_amount,
        telegramPaymentChargeId: payment.telegram_payment_charge_id,
      });
      switch (outcome.kind) {
        case 'credited':
          await ctx.reply(
            ctx.t('payment-credited', {
              plan: outcome.planName,
              until: formatTime(outcome.expiresAt),
            }),
          );
          return;
        case 'refunded':
          await ctx.reply(ctx.t('payment-refunded'));
          return;
        case 'refund_by_staff':
          await ctx.reply(ctx.t('payment-refund-by-staff'));
          return;
      }
    });
  }
}

/** The plan's name in the user's language (its display name there, else its slug). */
function titleOf(ctx: BotContext, plan: PlanChoice): string {
  return planTitle(plan, pickLocale(ctx.from?.language_code));
}

const PAID_TEXT = {
  not_found: 'paid-not-found',
  already_paid: 'paid-already',
  unknown: 'paid-unknown',
} as const;

function methodLabel(ctx: BotContext, choice: MethodChoice): string {
  const method = choice.method;
  switch (method.kind) {
    case 'ton':
      return ctx.t('method-ton', { currency: method.currency });
    case 'card':
      return ctx.t('method-card', {
        price: formatMinor(choice.price, method.currency),
        currency: method.currency,
      });
    case 'stars':
      return ctx.t('method-stars', { stars: choice.price });
  }
}

async function sendInvoice(ctx: BotContext, invoice: BotInvoice): Promise<void> {
  if (invoice.kind === 'ton') {
    await ctx.reply(
      ctx.t('ton-invoice', {
        amount: formatMinor(invoice.amountNano, 'TON'),
        address: invoice.address,
        comment: invoice.comment,
        link: invoice.link,
      }),
      {
        reply_markup: new InlineKeyboard().text(
          ctx.t('ton-paid'),
          CALLBACK.paid(invoice.invoiceId),
        ),
      },
    );
    return;
  }
  const title = ctx.t('invoice-title', { name: invoice.plan.name });
  await ctx.replyWithInvoice(
    title.slice(0, 32),
    ctx.t('invoice-description', { days: invoice.plan.durationDays }),
    invoice.invoiceId,
    invoice.currency,
    [{ label: title, amount: invoice.amount }],
    { provider_token: invoice.providerToken },
  );
}
