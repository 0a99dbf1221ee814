// Lets these plain-node scripts load the service's TypeScript modules, so that the embedded
// PostgreSQL and data-source code exist once.
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { dirname, resolve } from 'node:path';

export const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const require = createRequire(import.meta.url);
let registered = false;

export function requireTs(relativePath) {
  if (!registered) {
    require('ts-node').register({
      transpileOnly: true,
      project: resolve(root, 'tsconfig.json'),
      compilerOptions: { incremental: false },
    });
    registered = true;
  }
  return require(resolve(root, relativePath));
}
