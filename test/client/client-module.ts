/**
 * The browser client, loaded as CommonJS for jest.
 *
 * client/package.json says `"type": "module"`, so under this project's `module: node16` ts-jest
 * emits client/src/index.ts as an ES module, which jest's CommonJS runtime cannot run, and a static
 * import of it fails the root type check (TS1479). Until jest.config.js gives client/ a transform
 * of its own, compile it here. The client's runtime code is this one file and imports nothing at
 * run time, so there is nothing else to load.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import type * as ClientModule from '../../client/src/index.js' with { 'resolution-mode': 'import' };

const file = join(__dirname, '../../client/src/index.ts');
const { outputText } = ts.transpileModule(readFileSync(file, 'utf8'), {
  fileName: file,
  compilerOptions: {
    module: ts.ModuleKind.CommonJS,
    target: ts.ScriptTarget.ES2022,
    inlineSourceMap: true,
    inlineSources: true,
  },
});

// `Function`, not `vm`: the code must run in this test's realm so that `instanceof` and the
// globals (`Response`, `URLSearchParams`) are the test's own.
const loaded: { exports: object } = { exports: {} };
new Function('exports', 'module', `${outputText}\n//# sourceURL=${file}`)(loaded.exports, loaded);

export const clientModule = loaded.exports as typeof ClientModule;
export type { ClientModule };
