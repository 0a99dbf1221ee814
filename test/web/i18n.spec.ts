import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ERROR_STATUS } from '../../src/common/errors';
import { en } from '../../web/src/i18n/en';
import { ru } from '../../web/src/i18n/ru';

const WEB_SRC = join(__dirname, '../../web/src');

const placeholders = (text: string) => [...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return /\.tsx?$/.test(name) ? [path] : [];
  });
}

describe('the web app texts', () => {
  const english: Record<string, string> = en;
  const russian: Record<string, string> = ru;

  it('has the same keys in English and Russian, none empty', () => {
    expect(Object.keys(russian).sort()).toEqual(Object.keys(english).sort());
    const empty = Object.entries(russian).filter(([, text]) => text.trim() === '');
    expect(empty).toEqual([]);
  });

  it('uses the same placeholders in both languages', () => {
    const differ = Object.keys(english).filter(
      (key) => placeholders(english[key]).join() !== placeholders(russian[key] ?? '').join(),
    );
    expect(differ).toEqual([]);
  });

  it('puts every error code of the service into words', () => {
    const missing = Object.keys(ERROR_STATUS).filter((code) => !(`error.${code}` in english));
    expect(missing).toEqual([]);
  });

  it('has a text for every key the app asks for', () => {
    const asked = sources(WEB_SRC).flatMap((file) =>
      [...readFileSync(file, 'utf8').matchAll(/\bt\(\s*'([a-zA-Z]+\.[a-zA-Z.]+)'/g)].map(
        (m) => m[1],
      ),
    );
    expect(asked.length).toBeGreaterThan(50);
    expect([...new Set(asked.filter((key) => !(key in english)))]).toEqual([]);
  });
});
