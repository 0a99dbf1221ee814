import {
  createContext,
  type ReactNode,
  useCallback,
  useContext,
  useEffect,
  useMemo,
  useState,
} from 'react';
import { ApiError } from '../api/client';
import { en, type MessageKey } from './en';
import { minorToDecimal } from './money';
import { ru } from './ru';

export type Language = 'en' | 'ru';
export const LANGUAGES: readonly Language[] = ['en', 'ru'];

const MESSAGES: Record<Language, Record<MessageKey, string>> = { en, ru };
const STORAGE_KEY = 'vpn-language';

type Vars = Record<string, string | number>;

export interface I18n {
  language: Language;
  setLanguage(language: Language): void;
  t(key: MessageKey, vars?: Vars): string;
  /**
   * A failed call in words: the contract's code from the locale, then what is wrong with each
   * field not in `shown` (the fields a form shows at their inputs with `fieldErrors`).
   */
  errorText(error: unknown, shown?: readonly string[]): string;
  /**
   * What is wrong with each field of a failed call, in the page's language, by field: the first
   * problem of each, put into words from its `rule` (never the service's English `message`).
   */
  fieldErrors(error: unknown): Record<string, string>;
  money(amount: string, currency: string): string;
  bytes(value: number): string;
  date(iso: string): string;
  /** A moment to the minute (a device last seen), in UTC as the service's days are. */
  dateTime(iso: string): string;
}

export { decimalToMinor } from './money';

export function fill(text: string, vars: Vars = {}): string {
  return text.replace(/\{(\w+)\}/g, (whole, name: string) =>
    name in vars ? String(vars[name]) : whole,
  );
}

function initialLanguage(): Language {
  try {
    const stored = localStorage.getItem(STORAGE_KEY);
    if (stored === 'en' || stored === 'ru') return stored;
  } catch {
    // Storage blocked: fall back to the browser's language.
  }
  return navigator.language.toLowerCase().startsWith('ru') ? 'ru' : 'en';
}

/**
 * The first problem of each field in words: `invalid.<field>.<rule>` when the field has its own
 * text for the rule, else `invalid.<rule>`, else `invalid.generic`. A nested field
 * (`display.ru.name`) is keyed by its whole path.
 */
function fieldErrorsOf(
  error: ApiError,
  messages: Record<MessageKey, string>,
): Record<string, string> {
  const found: Record<string, string> = {};
  for (const { field, rule } of error.details) {
    if (field in found) continue;
    const leaf = field.split('.').pop() ?? field;
    const keys = rule ? [`invalid.${leaf}.${rule}`, `invalid.${rule}`] : [];
    const key = [...keys, 'invalid.generic'].find((k) => k in messages) as MessageKey;
    found[field] = messages[key];
  }
  return found;
}

const I18nContext = createContext<I18n | null>(null);

export function I18nProvider({ children }: { children: ReactNode }) {
  const [language, setLanguageState] = useState<Language>(initialLanguage);
  // The page says its language to screen readers, also when it came from storage.
  useEffect(() => {
    document.documentElement.lang = language;
  }, [language]);
  const setLanguage = useCallback((next: Language) => {
    setLanguageState(next);
    try {
      localStorage.setItem(STORAGE_KEY, next);
    } catch {
      // Not remembered across visits; the choice still holds for this page.
    }
  }, []);

  const value = useMemo<I18n>(() => {
    const messages = MESSAGES[language];
    const t = (key: MessageKey, vars?: Vars) => fill(messages[key], vars);
    const locale = language === 'ru' ? 'ru-RU' : 'en-GB';
    return {
      language,
      setLanguage,
      t,
      errorText(error, shown = []) {
        if (!(error instanceof ApiError)) return t('error.unknown');
        const key = `error.${error.code}` as MessageKey;
        const text =
          key in messages ? t(key, { requestId: error.requestId ?? '-' }) : error.message;
        const others = Object.entries(fieldErrorsOf(error, messages))
          .filter(([field]) => !shown.includes(field))
          .map(([, problem]) => problem);
        return [text, ...others].join(' ');
      },
      fieldErrors(error) {
        return error instanceof ApiError ? fieldErrorsOf(error, messages) : {};
      },
      money(amount, currency) {
        const decimal = minorToDecimal(amount, currency);
        if (currency === 'TON') return `${decimal} TON`;
        if (currency === 'XTR') return `${decimal} ⭐`;
        return `${decimal} ${currency}`;
      },
      bytes(value) {
        const units = ['B', 'KB', 'MB', 'GB', 'TB'];
        let n = value;
        let unit = 0;
        while (n >= 1024 && unit < units.length - 1) {
          n /= 1024;
          unit += 1;
        }
        return `${new Intl.NumberFormat(locale, { maximumFractionDigits: 1 }).format(n)} ${units[unit]}`;
      },
      date(iso) {
        return new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeZone: 'UTC' }).format(
          new Date(iso),
        );
      },
      dateTime(iso) {
        const format = new Intl.DateTimeFormat(locale, {
          dateStyle: 'medium',
          timeStyle: 'short',
          timeZone: 'UTC',
        });
        return `${format.format(new Date(iso))} UTC`;
      },
    };
  }, [language, setLanguage]);

  return <I18nContext.Provider value={value}>{children}</I18nContext.Provider>;
}

export function useI18n(): I18n {
  const value = useContext(I18nContext);
  if (!value) throw new Error('useI18n outside I18nProvider');
  return value;
}
