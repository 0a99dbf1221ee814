import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const CLIENT = resolve(__dirname, '..', 'client');

/** The client's own files: its sources and its package's settings (not what a build writes). */
function clientFiles(dir = CLIENT): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory())
      return ['dist', 'node_modules'].includes(entry.name) ? [] : clientFiles(path);
    return /\.(ts|json)$/.test(entry.name) ? [path] : [];
  });
}

/** client/ is published on its own: nothing in it may lean on a file outside it. */
describe('the client package depends only on its own files', () => {
  it('imports only its own files and names no path outside the repository', () => {
    const problems = clientFiles().flatMap((file) => {
      const text = readFileSync(file, 'utf8');
      const name = relative(CLIENT, file);
      const outside = [
        ...text.matchAll(/(?<![\w.:/-])\/(?:work|home|tmp|Users|root)\/[^\s'"`)]*/g),
      ].map((match) => `${name} names ${match[0]}`);
      const imports = [...text.matchAll(/from '(\.[^']*)'/g)]
        .map((match) => match[1])
        .filter((path) => {
          const target = resolve(dirname(file), path.replace(/\.js$/, ''));
          const inside = !relative(CLIENT, target).startsWith('..');
          const found = ['.ts', '.d.ts', ''].some((ext) => existsSync(target + ext));
          return !inside || !found;
        })
        .map((path) => `${name} imports ${path}`);
      return [...outside, ...imports];
    });
    expect(problems).toEqual([]);
  });
});
