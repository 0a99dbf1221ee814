import { join } from 'node:path';
import { I18n, type I18nFlavor } from '@grammyjs/i18n';
import type { Context } from 'grammy';

export type BotContext = Context & I18nFlavor;

export const LOCALES = ['en', 'ru'] as const;
export type Locale = (typeof LOCALES)[number];
export const DEFAULT_LOCALE: Locale = 'en';

/** The locale files: `locales/<locale>.ftl` beside this file (copied next to the build too). */
export const LOCALES_DIR = join(__dirname, 'locales');

/** Russian for Telegram accounts set to Russian, English for everyone else. */
export function pickLocale(languageCode: string | null | undefined): Locale {
  return languageCode?.toLowerCase().startsWith('ru') ? 'ru' : DEFAULT_LOCALE;
}

/** The bot's texts, from the Fluent files, chosen by the user's Telegram `language_code`. */
export function createI18n(): I18n<BotContext> {
  const i18n = new I18n<BotContext>({
    defaultLocale: DEFAULT_LOCALE,
    localeNegotiator: (ctx) => pickLocale(ctx.from?.language_code),
    // No invisible isolation marks around values: addresses and comments are copied by hand.
    fluentBundleOptions: { useIsolating: false },
  });
  i18n.loadLocalesDirSync(LOCALES_DIR);
  return i18n;
}

/** A time as the bot writes it: `2026-11-22 17:05 UTC`, the same in every language. */
export function formatTime(time: Date): string {
  return `${time.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}
