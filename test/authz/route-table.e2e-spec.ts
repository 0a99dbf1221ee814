import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestApp, type TestApp } from '../harness/app';
import { compareKeys, type DiscoveredRoute, discoverRoutes } from './discover-routes';
import { ROUTE_TABLE } from './route-table';

const TABLE_FILE = join(__dirname, 'route-table.ts');
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
