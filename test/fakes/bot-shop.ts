import { newUser, savePlan } from '../harness/factories';
import { type BotWorld, type TgUser, startBotWorld } from './bot';
import { controlClock, type ControlledClock } from './clock';

/**
 * The bot world with two plans on sale (`monthly`: USD, RUB and Stars; `fiat-only`: USD), and the
 * steps of buying as a user takes them: through the buttons the bot actually sent.
 */
export async function startShopWorld() {
  let chargeCounter = 0;
  const w: BotWorld = await startBotWorld({ USD: '5' });
  const clock: ControlledClock = controlClock(w.t);
  const owner = await newUser(w.t, 'owner');
  for (const [name, prices] of [
    ['monthly', { USD: '499', RUB: '45000', XTR: '250' }],
    ['fiat-only', { USD: '999' }],
  ] as const) {
    await savePlan(w.t, owner, { traffic_limit_bytes: 1024, prices }, name);
  }

  const text = (call: { body: unknown }) => (call.body as { text: string }).text;

  /** /start, "Buy in the bot", the plan: the method buttons the bot offered. */
  const methodsOf = async (from: TgUser, planName: string) => {
    await w.start(from);
    const welcome = w.sentTo(from.id, 'sendMessage').at(-1)!;
    const buy = w.buttons(welcome).find((b) => b.callback_data === 'v1:plans');
    await w.press(from, buy!.callback_data!);
    const plans = w.sentTo(from.id, 'sendMessage').at(-1)!;
    const planButton = w.buttons(plans).find((b) => b.text.startsWith(`${planName} `));
    await w.press(from, planButton!.callback_data!);
    return w.buttons(w.sentTo(from.id, 'editMessageText').at(-1)!);
  };

  const choose = async (from: TgUser, planName: string, label: RegExp) => {
    const button = (await methodsOf(from, planName)).find((b) => label.test(b.text));
    if (!button?.callback_data) throw new Error(`no button ${String(label)}`);
    await w.press(from, button.callback_data);
  };

  const preCheckout = async (from: TgUser, payload: string, currency: string, amount: number) => {
    await w.send({
      update_id: w.nextUpdateId(),
      pre_checkout_query: {
        id: `pcq${w.nextUpdateId()}`,
        from,
        currency,
        total_amount: amount,
        invoice_payload: payload,
      },
    });
    return w.botApi.callsOf('answerPreCheckoutQuery').at(-1)?.body as {
      ok: boolean;
      error_message?: string;
    };
  };

  const paymentUpdate = (from: TgUser, payload: string, currency: string, amount: number) => {
    chargeCounter += 1;
    return {
      update_id: w.nextUpdateId(),
      message: {
        message_id: w.nextUpdateId(),
        date: Math.floor(Date.now() / 1000),
        chat: { id: from.id, type: 'private' },
        from,
        successful_payment: {
          currency,
          total_amount: amount,
          invoice_payload: payload,
          telegram_payment_charge_id: `tg-charge-${process.pid}-${chargeCounter}`,
          provider_payment_charge_id: `provider-${chargeCounter}`,
        },
      },
    };
  };

  const expiry = async (tgId: number): Promise<number | null> => {
    const [row] = await w.t.dataSource.query(
      `SELECT subscription_expires_at AS at FROM users WHERE tg_id = $1`,
      [tgId],
    );
    return row?.at ? new Date(row.at).getTime() : null;
  };

  return { w, clock, text, methodsOf, choose, preCheckout, paymentUpdate, expiry };
}

export type ShopWorld = Awaited<ReturnType<typeof startShopWorld>>;
export type { TgUser };
