import { type Settings } from '../../config/settings';

/**
 * The ways a subscriber can pay, as the web app offers them: `ton` (a transfer to
 * TON_WALLET_ADDRESS), `telegram` (Telegram Payments in the plan's currencies: BOT_TOKEN and
 * TELEGRAM_PAYMENT_PROVIDER_TOKEN) and `stars` (Telegram Stars, paid to the bot: BOT_TOKEN alone).
 */
export const PAYMENT_METHODS = ['ton', 'telegram', 'stars'] as const;
export type PaymentMethod = (typeof PAYMENT_METHODS)[number];

/** The methods whose settings are present; the providers refuse the others as not configured. */
export function configuredPaymentMethods(
  settings: Pick<Settings, 'tonWalletAddress' | 'botToken' | 'telegramPaymentProviderToken'>,
): PaymentMethod[] {
  const configured: Record<PaymentMethod, boolean> = {
    ton: settings.tonWalletAddress !== null,
    telegram: Boolean(settings.botToken) && settings.telegramPaymentProviderToken !== null,
    stars: Boolean(settings.botToken),
  };
  return PAYMENT_METHODS.filter((method) => configured[method]);
}
