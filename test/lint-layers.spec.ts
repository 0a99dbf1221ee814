/**
 * The layering rule (scripts/eslint-layers.mjs, in `npm run lint`): a shared folder of `src/` that
 * imports a feature is refused, a feature that imports a shared folder or another feature is not.
 * Run through ESLint's Linter on made-up files, in a child process (the rule is an ES module).
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(__dirname, '..');

/** The layering rule's messages for `code` as the file `path` of this repository. */
function layerProblems(path: string, code: string): string[] {
  const script = `
    const { Linter } = require('eslint');
    const tseslint = require('typescript-eslint');
    import(${JSON.stringify(join(ROOT, 'scripts/eslint-layers.mjs'))}).then(({ layers }) => {
      const linter = new Linter({ cwd: ${JSON.stringify(ROOT)} });
      const messages = linter.verify(process.argv[1], [{
        files: ['**/*.ts'],
        languageOptions: { parser: tseslint.parser },
        plugins: { layers },
        rules: { 'layers/shared-folders-are-leaves': ['error', { root: ${JSON.stringify(ROOT)} }] },
      }], { filename: ${JSON.stringify(join(ROOT, path))} });
      process.stdout.write(JSON.stringify(messages.map((m) => m.message)));
    });`;
  return JSON.parse(execFileSync(process.execPath, ['-e', script, code], { cwd: ROOT }).toString());
}

describe('shared folders are leaves (npm run lint)', () => {
  it('refuses an import from common/ or database/ into a feature', () => {
    expect(
      layerProblems('src/common/example.ts', "import { money } from '../billing/money';"),
    ).toEqual([
      'common/ is a shared folder: it may not import the feature billing/ (docs/development.md, "Layers")',
    ]);
    expect(
      layerProblems('src/database/deep/example.ts', "export * from '../../users/users.service';"),
    ).toHaveLength(1);
  });

  it('lets shared folders import each other, and features import anything', () => {
    expect(
      layerProblems('src/common/example.ts', "import { x } from '../config/settings';"),
    ).toEqual([]);
    expect(
      layerProblems('src/billing/example.ts', "import { x } from '../users/users.service';"),
    ).toEqual([]);
    expect(
      layerProblems('src/billing/example.ts', "import { x } from '../common/errors';"),
    ).toEqual([]);
  });
});
