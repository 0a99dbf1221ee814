import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { startTestApp, type TestApp } from '../harness/app';
import { compareKeys, type DiscoveredRoute, discoverRoutes, OUTSIDE_NEST } from './discover-routes';
import { ROUTE_TABLE } from './route-table';

const TABLE_FILE = join(__dirname, 'route-table.ts');
const INDEX_FILE = join(__dirname, '..', '..', 'docs', 'routes.md');
const ROOT = join(__dirname, '..', '..');
const UPDATE = process.env.UPDATE_AUTH_TABLE === '1';

/** The table file as `UPDATE_AUTH_TABLE=1` writes it: sorted, prettier-formatted. */
function renderTable(routes: DiscoveredRoute[]): string {
  const lines = routes.map((r) => `  '${r.key}': '${r.guard}',`);
  return `/**
 * Who may call each route the service serves: \`METHOD /api/v1/path\` → guard name (see
 * discover-routes.ts). route-table.e2e-spec.ts fails when the served routes and this table differ,
 * and matrix.e2e-spec.ts calls every route as every kind of caller and expects what this says.
 * A change of access is a reviewed diff of this file: regenerate it with
 * \`UPDATE_AUTH_TABLE=1 npx jest test/authz\`, then read \`git diff test/authz/route-table.ts\`.
 */
export const ROUTE_TABLE: Readonly<Record<string, string>> = {
${lines.join('\n')}
};
`;
}

/** Where each controller class is declared: `FooController` → `src/foo/foo.controller.ts`. */
function controllerFiles(): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.controller.ts')) {
        for (const match of readFileSync(path, 'utf8').matchAll(/export class (\w+)/g))
          files.set(match[1], relative(ROOT, path));
      }
    }
  };
  walk(join(ROOT, 'src'));
  return files;
}

/** docs/routes.md: one line a route, so one grep finds any route's handler and its file. */
function renderIndex(routes: DiscoveredRoute[]): string {
  const files = controllerFiles();
  const rows = routes.map((r) => {
    const file = files.get(r.handler.split('.')[0]);
    const where = file ? `[\`${file}\`](../${file})` : '-';
    return `| ${r.method} | \`${r.path}\` | ${r.guard} | \`${r.handler}\` | ${where} |`;
  });
  return `# Route index

Every route the service serves: method, path, who may call it (the guard names of
\`test/authz/discover-routes.ts\`) and the handler with its file. Generated with the authorization
table: \`UPDATE_AUTH_TABLE=1 npx jest test/authz/route-table\`; \`npm test\` fails when it is stale.

| method | path | guard | handler | file |
|---|---|---|---|---|
${rows.join('\n')}
`;
}

/** Readable differences between the table and the served routes; empty when they agree. */
function tableDiff(table: Readonly<Record<string, string>>, routes: DiscoveredRoute[]): string[] {
  const served = new Map(routes.map((r) => [r.key, r]));
  const keys = [...new Set([...Object.keys(table), ...served.keys()])].sort(compareKeys);
  const diff: string[] = [];
  for (const key of keys) {
    const route = served.get(key);
    const listed = table[key];
    if (!route) diff.push(`- ${key}: '${listed}' is in the table but no such route is served`);
    else if (listed === undefined)
      diff.push(`+ ${key}: served as '${route.guard}' (${route.handler}) but not in the table`);
    else if (listed !== route.guard)
      diff.push(`~ ${key}: table says '${listed}', served as '${route.guard}' (${route.handler})`);
  }
  return diff;
}

describe('authorization table', () => {
  let t: TestApp;
  let routes: DiscoveredRoute[];
  beforeAll(async () => {
    t = await startTestApp();
    routes = discoverRoutes(t.app);
  });
  afterAll(() => t.close());

  it('the served routes and their guards equal test/authz/route-table.ts', () => {
    expect(routes.length).toBeGreaterThan(10);
    if (UPDATE) {
      writeFileSync(TABLE_FILE, renderTable(routes));
      console.warn(`wrote ${routes.length} routes to ${TABLE_FILE}; review its git diff`);
      return;
    }
    const diff = tableDiff(ROUTE_TABLE, routes);
    if (diff.length > 0) {
      throw new Error(
        `the routes served differ from test/authz/route-table.ts:\n\n${diff.join('\n')}\n\n` +
          'If the change is intended: UPDATE_AUTH_TABLE=1 npx jest test/authz, then review the diff.',
      );
    }
  });

  it('docs/routes.md indexes every served route with its handler and file', () => {
    const index = renderIndex(routes);
    if (UPDATE) {
      writeFileSync(INDEX_FILE, index);
      return;
    }
    expect(routes.every((r) => r.handler === OUTSIDE_NEST || index.includes(r.handler))).toBe(true);
    if (readFileSync(INDEX_FILE, 'utf8') !== index) {
      throw new Error(
        'docs/routes.md is stale: UPDATE_AUTH_TABLE=1 npx jest test/authz/route-table, then review it.',
      );
    }
  });

  it('the diff names missing, extra and changed routes', () => {
    const sample: DiscoveredRoute[] = [
      { key: 'GET /a', method: 'GET', path: '/a', guard: 'user', handler: 'A.a' },
      { key: 'GET /b', method: 'GET', path: '/b', guard: 'owner', handler: 'B.b' },
    ];
    expect(tableDiff({ 'GET /b': 'staff', 'GET /c': 'public' }, sample)).toEqual([
      "+ GET /a: served as 'user' (A.a) but not in the table",
      "~ GET /b: table says 'staff', served as 'owner' (B.b)",
      "- GET /c: 'public' is in the table but no such route is served",
    ]);
  });
});
