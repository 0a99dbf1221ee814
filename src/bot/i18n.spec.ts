import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REMINDER_KINDS } from './entities/bot-reminder.entity';
import { createI18n, LOCALES, LOCALES_DIR, pickLocale } from './i18n';

/** Message ids and the variables each uses, read from one Fluent file. */
function messages(locale: string): Map<string, Set<string>> {
  const source = readFileSync(join(LOCALES_DIR, `${locale}.ftl`), 'utf8');
  const found = new Map<string, Set<string>>();
  let current: Set<string> | null = null;
  for (const line of source.split('\n')) {
    const start = /^([a-z][a-z0-9_-]*)\s*=/.exec(line);
    if (start) {
      current = new Set();
      found.set(start[1], current);
    } else if (!/^\s/.test(line)) {
      current = null;
    }
    for (const variable of line.matchAll(/\{\s*\$([a-z_]+)\s*\}/g)) current?.add(variable[1]);
  }
  return found;
}

/** Every key the bot's code asks for: literal ones, and the ones it builds from a closed set. */
function keysUsedInCode(): string[] {
  const dir = join(__dirname);
  const files = [
    ...readdirSync(dir).map((f) => join(dir, f)),
    ...readdirSync(join(dir, 'composers')).map((f) => join(dir, 'composers', f)),
  ].filter((file) => file.endsWith('.ts') && !file.endsWith('.spec.ts'));
  const literal = files.flatMap((file) =>
    [...readFileSync(file, 'utf8').matchAll(/\bt\(\s*'([a-z0-9_-]+)'/g)].map((m) => m[1]),
  );
  const built = [
    ...['confirmed', 'cancelled', 'gone'].map((r) => `login-${r}`),
    ...['attached', 'kept', 'other', 'unknown'].map((r) => `partner-${r}`),
    ...['unknown_invoice', 'not_pending', 'wrong_price'].map((r) => `checkout-${r}`),
    ...REMINDER_KINDS.map((kind) => `reminder-${kind}`),
    'paid-not-found',
    'paid-already',
    'paid-unknown',
    'error-upstream',
    'error-too-many-invoices',
    'plan-gone',
  ];
  return [...new Set([...literal, ...built])].sort();
}

describe('the bot texts', () => {
  const byLocale = new Map(LOCALES.map((locale) => [locale, messages(locale)]));
  const english = byLocale.get('en')!;

  it('exist in every language with the same keys and the same variables', () => {
    expect(english.size).toBeGreaterThan(40);
    for (const locale of LOCALES) {
      const other = byLocale.get(locale)!;
      expect([...other.keys()].sort()).toEqual([...english.keys()].sort());
      for (const [key, variables] of english) {
        expect({ key, variables: [...(other.get(key) ?? [])].sort() }).toEqual({
          key,
          variables: [...variables].sort(),
        });
      }
    }
  });

  it('cover every key the code uses', () => {
    const missing = keysUsedInCode().filter((key) => !english.has(key));
    expect(missing).toEqual([]);
  });

  it('render in both languages with every variable filled: no raw keys, no {$name} left', () => {
    const i18n = createI18n();
    for (const locale of LOCALES) {
      for (const [key, variables] of english) {
        const values = Object.fromEntries([...variables].map((v) => [v, `<${v}-value>`]));
        const text = i18n.t(locale, key, values);
        expect({ locale, key, raw: text === key }).toEqual({ locale, key, raw: false });
        expect(text).not.toMatch(/\{\s*\$|\{\?\?\?\}|\u2068|\u2069/);
        for (const v of variables) expect(text).toContain(`<${v}-value>`);
      }
    }
  });

  it('speak Russian to Russian accounts and English to everyone else', () => {
    expect(pickLocale('ru')).toBe('ru');
    expect(pickLocale('ru-RU')).toBe('ru');
    expect(pickLocale('en')).toBe('en');
    expect(pickLocale('de')).toBe('en');
    expect(pickLocale(undefined)).toBe('en');
  });
});
