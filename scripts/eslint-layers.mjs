/**
 * The layering rule of docs/development.md, as an ESLint rule: the shared folders of `src/`
 * (common, database, config, scheduler, settings-store) are leaves, so a file in one of them
 * imports only from shared folders and packages, never from a feature (auth, users, billing, …).
 * Features import shared folders and each other. `knownBackImports` lists the back-imports the code
 * still has, each to be removed (docs/development.md says which); a new one fails `npm run lint`.
 */
import { dirname, relative, resolve, sep } from 'node:path';

export const SHARED_FOLDERS = ['common', 'database', 'config', 'scheduler', 'settings-store'];

/** The top folder of `src/` a path lies in, or null outside `src/`. */
function srcFolder(root, path) {
  const inside = relative(resolve(root, 'src'), path);
  if (inside.startsWith('..') || inside === '') return null;
  const [top] = inside.split(sep);
  return top.endsWith('.ts') ? null : top;
}

/** @type {import('eslint').Rule.RuleModule} */
const sharedFoldersAreLeaves = {
  meta: {
    type: 'problem',
    docs: { description: 'shared folders of src/ import no feature' },
    schema: [
      {
        type: 'object',
        properties: {
          root: { type: 'string' },
          knownBackImports: { type: 'array', items: { type: 'string' } },
        },
        additionalProperties: false,
      },
    ],
    messages: {
      backImport:
        '{{from}}/ is a shared folder: it may not import the feature {{to}}/ (docs/development.md, "Layers")',
    },
  },
  create(context) {
    const { root, knownBackImports = [] } = context.options[0] ?? {};
    const file = context.filename;
    const from = srcFolder(root, file);
    if (from === null || !SHARED_FOLDERS.includes(from)) return {};
    const known = new Set(knownBackImports);
    const check = (node, specifier) => {
      if (typeof specifier !== 'string' || !specifier.startsWith('.')) return;
      const target = resolve(dirname(file), specifier);
      const to = srcFolder(root, target);
      if (to === null || SHARED_FOLDERS.includes(to)) return;
      const here = relative(root, file);
      if (known.has(`${here} -> ${relative(root, target)}`) || known.has(`${here} -> *`)) return;
      context.report({ node, messageId: 'backImport', data: { from, to } });
    };
    return {
      ImportDeclaration: (node) => check(node, node.source.value),
      ExportNamedDeclaration: (node) => node.source && check(node, node.source.value),
      ExportAllDeclaration: (node) => check(node, node.source.value),
      ImportExpression: (node) => node.source.type === 'Literal' && check(node, node.source.value),
    };
  },
};

export const layers = { rules: { 'shared-folders-are-leaves': sharedFoldersAreLeaves } };
