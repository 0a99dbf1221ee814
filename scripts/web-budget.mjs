// Prints the web app's initial JavaScript (the entry script and the chunks index.html preloads),
// gzipped, and fails the build when it is over the budget. Chunks loaded later (the staff console)
// are listed apart and do not count.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const BUDGET_KB = 250;
const dir = resolve(
  process.env.WEB_OUT_DIR ?? join(dirname(fileURLToPath(import.meta.url)), '../web/dist'),
);
const html = readFileSync(join(dir, 'index.html'), 'utf8');
const initial = [
  ...html.matchAll(/<script[^>]*\bsrc="\/([^"]+\.js)"/g),
  ...html.matchAll(/<link[^>]*rel="modulepreload"[^>]*href="\/([^"]+\.js)"/g),
].map((match) => match[1]);
const gzipKb = (file) => gzipSync(readFileSync(join(dir, file)), { level: 9 }).length / 1024;

const total = initial.reduce((sum, file) => sum + gzipKb(file), 0);
const later = readdirSync(join(dir, 'assets'))
  .map((name) => `assets/${name}`)
  .filter((file) => file.endsWith('.js') && !initial.includes(file));
console.log(
  `web app: initial JavaScript ${total.toFixed(1)} KB gzipped (budget ${BUDGET_KB} KB): ${initial.join(', ')}`,
);
for (const file of later)
  console.log(`web app: loaded later ${file} ${gzipKb(file).toFixed(1)} KB gzipped`);
if (initial.length === 0) {
  console.error('web app: index.html names no script');
  process.exit(1);
}
if (total > BUDGET_KB) {
  console.error(`web app: initial JavaScript is over the ${BUDGET_KB} KB budget`);
  process.exit(1);
}
