/**
 * Writes the browser client's route types from the service's own OpenAPI document:
 * `client/openapi.json` (the document as `GET /api/v1/docs-json` serves it) and
 * `client/src/schema.d.ts` (openapi-typescript's types of it), which client/src/types.ts aliases.
 *
 *   node -r ts-node/register/transpile-only scripts/openapi.ts           write both files
 *   node -r ts-node/register/transpile-only scripts/openapi.ts --check   write nothing; exit 1 on drift
 *
 * The app boots on a throw-away embedded PostgreSQL with dummy secrets; nothing is served.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { buildOpenApiDocument } from '../src/app.factory';
import { startStandaloneApp } from './lib/standalone-app';

const ROOT = join(__dirname, '..');
export const OPENAPI_FILE = join(ROOT, 'client', 'openapi.json');
export const SCHEMA_FILE = join(ROOT, 'client', 'src', 'schema.d.ts');

/** The committed form of the document: keys in the order @nestjs/swagger builds them. */
function documentText(document: unknown): string {
  return `${JSON.stringify(document, null, 2)}\n`;
}

/** The types of `documentText`, exactly as `npx openapi-typescript <file> -o <out>` writes them. */
async function schemaText(documentJson: string): Promise<string> {
  // The ES module build, as its CLI uses; `module: node16` keeps this a real dynamic import.
  const { default: openapiTS, astToString, COMMENT_HEADER } = await import('openapi-typescript');
  const ast = await openapiTS(documentJson);
  return COMMENT_HEADER + astToString(ast);
}

/** Boots the app on a throw-away database and builds its document, as the docs route does. */
async function generateDocument(): Promise<unknown> {
  const standalone = await startStandaloneApp({ postgresFlags: ['-c', 'fsync=off'] });
  try {
    await standalone.app.init();
    // A JSON round trip drops what JSON cannot carry (undefined), as the served document does.
    return JSON.parse(JSON.stringify(buildOpenApiDocument(standalone.app))) as unknown;
  } finally {
    await standalone.close();
  }
}

function readOrNull(file: string): string | null {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return null;
  }
}

async function main(): Promise<number> {
  const check = process.argv.includes('--check');
  const documentJson = documentText(await generateDocument());
  const outputs = [
    { file: OPENAPI_FILE, text: documentJson },
    { file: SCHEMA_FILE, text: await schemaText(documentJson) },
  ];
  let stale = 0;
  for (const { file, text } of outputs) {
    const name = relative(ROOT, file);
    const same = readOrNull(file) === text;
    if (check) {
      if (!same) {
        stale += 1;
        process.stderr.write(`${name} is out of date\n`);
      }
    } else {
      if (!same) writeFileSync(file, text);
      process.stdout.write(`${name} ${same ? 'unchanged' : 'written'}\n`);
    }
  }
  if (check && stale > 0) {
    process.stderr.write('the client types do not match the service: run `npm run client:types`\n');
    return 1;
  }
  if (check)
    process.stdout.write('client/openapi.json and client/src/schema.d.ts are up to date\n');
  return 0;
}

if (require.main === module) {
  main().then(
    (code) => process.exit(code),
    (error: unknown) => {
      process.stderr.write(
        `${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
      );
      process.exit(1);
    },
  );
}
