import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { Client } from 'pg';
import * as ts from 'typescript';
import { getMetadataArgsStorage } from 'typeorm';
import { ENTITIES } from '../src/entities';
import { createTestDatabase, type TestDatabase } from './harness/database';

/**
 * The owner table of docs/development.md is the rule: each table is written and locked only by the files it
 * names. This reads the SQL of every source file (its string and template literals) and TypeORM
 * entity writes, and fails when a table is written by a file that does not own it, when a table of
 * the database is missing from docs/development.md, or when an entity lives outside its writer's feature.
 */

const ROOT = join(__dirname, '..');
/**
 * Written by TypeORM's migration runner only, or (routing_version) by a trigger only: migration
 * 0019's, on every change of a routed column of `nodes`.
 */
const NOT_OWNED = new Set(['migrations', 'routing_version']);

/** The owner table of docs/development.md: table name → the files that may write it. */
function readmeOwners(): Map<string, string[]> {
  const readme = readFileSync(join(ROOT, 'docs/development.md'), 'utf8');
  const start = readme.indexOf('| table ');
  const owners = new Map<string, string[]>();
  for (const line of readme.slice(start).split('\n').slice(2)) {
    if (!line.startsWith('|')) break;
    const [tables, files] = line.split('|').slice(1, 3);
    const paths = files.match(/src\/[\w./-]+\.ts/g) ?? [];
    for (const table of tables.split(',')) owners.set(table.trim(), paths);
  }
  return owners;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'migrations' ? [] : sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') ? [path] : [];
  });
}

/** Stands for an interpolation in a template literal's text. */
const HOLE = '${}';

/** Every string and template literal of a file (interpolations as HOLE): its SQL, no comments. */
function literals(source: ts.SourceFile): string[] {
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) found.push(node.text);
    else if (ts.isTemplateExpression(node)) {
      found.push(
        [node.head.text, ...node.templateSpans.map((span) => span.literal.text)].join(HOLE),
      );
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

const ENTITY_TABLES = new Map(
  getMetadataArgsStorage()
    .tables.filter((table) => ENTITIES.includes(table.target as (typeof ENTITIES)[number]))
    .map((table) => [(table.target as { name: string }).name, table.name as string]),
);

const OWNERS = readmeOwners();

/** `tablesWrittenBy` of each file text read so far. */
const parsed = new Map<string, Set<string>>();

/** A table name, or an interpolation standing for one. */
const NAME = '"?(\\w+|\\$\\{\\})';

/**
 * The tables a file's code writes or locks. A table named by an interpolation
 * (`DELETE FROM ${table}`) counts as each table the file names in a literal of its own
 * (`table: 'login_codes' | …`).
 */
function tablesWrittenBy(text: string, fileName = 'file.ts'): Set<string> {
  const known = parsed.get(text);
  if (known) return known;
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true);
  const sqls = literals(source);
  const named = new Set(sqls.filter((sql) => OWNERS.has(sql)));
  const written = new Set<string>();
  const add = (name: string): void => {
    if (name !== HOLE) written.add(name.toLowerCase());
    else for (const table of named) written.add(table);
  };
  for (const sql of sqls) {
    const patterns = [
      new RegExp(`\\bINSERT\\s+INTO\\s+${NAME}`, 'gi'),
      new RegExp(`\\bUPDATE\\s+${NAME}"?\\s+(?:AS\\s+)?(?:\\w+\\s+)?SET\\b`, 'gi'),
      new RegExp(`\\bDELETE\\s+FROM\\s+${NAME}`, 'gi'),
      new RegExp(`\\bTRUNCATE\\s+(?:TABLE\\s+)?${NAME}`, 'gi'),
    ];
    for (const pattern of patterns) {
      for (const match of sql.matchAll(pattern)) {
        if (match[1].toUpperCase() !== 'SET') add(match[1]);
      }
    }
    // A row lock: the table of the last FROM before the locking clause (the locking SELECT's own).
    for (const lock of sql.matchAll(/\bFOR\s+(?:NO\s+KEY\s+)?(?:UPDATE|SHARE)\b/gi)) {
      const froms = [...sql.slice(0, lock.index).matchAll(new RegExp(`\\bFROM\\s+${NAME}`, 'gi'))];
      if (froms.length > 0) add(froms[froms.length - 1][1]);
    }
  }
  // TypeORM writes: a repository of an entity, in a file that calls a writing method.
  const writes = /\.(save|insert|update|upsert|delete|remove|softDelete|increment|decrement)\(/;
  if (writes.test(text)) {
    for (const match of text.matchAll(/getRepository\((\w+)\)/g)) {
      const table = ENTITY_TABLES.get(match[1]);
      if (table) written.add(table);
    }
  }
  parsed.set(text, written);
  return written;
}

/** Files that write a table they do not own, as `table: file`. */
function trespasses(owners: Map<string, string[]>, files: Map<string, string>): string[] {
  const found: string[] = [];
  for (const [file, text] of files) {
    for (const table of tablesWrittenBy(text, file)) {
      if (NOT_OWNED.has(table)) continue;
      if (!(owners.get(table) ?? []).includes(file)) found.push(`${table}: ${file}`);
    }
  }
  return found.sort();
}

const feature = (path: string): string => path.split('/')[1];

describe('table ownership', () => {
  let db: TestDatabase;
  let tables: string[];
  const owners = OWNERS;
  const files = new Map(
    sourceFiles(join(ROOT, 'src')).map((path) => [
      relative(ROOT, path),
      readFileSync(path, 'utf8'),
    ]),
  );

  beforeAll(async () => {
    db = await createTestDatabase();
    const client = new Client({ connectionString: db.url });
    await client.connect();
    try {
      const result = await client.query<{ tablename: string }>(
        `SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename`,
      );
      tables = result.rows.map((row) => row.tablename).filter((name) => !NOT_OWNED.has(name));
    } finally {
      await client.end();
    }
  });
  afterAll(() => db.drop());

  it('docs/development.md names an owner for every table of the migrated database, and only those', () => {
    expect([...owners.keys()].sort()).toEqual(tables);
    for (const [table, paths] of owners) {
      expect({ table, owners: paths.length }).not.toEqual({ table, owners: 0 });
      for (const path of paths) expect(files.has(path)).toBe(true);
    }
  });

  it('no table is written or locked by a file that does not own it', () => {
    expect(trespasses(owners, files)).toEqual([]);
  });

  it('every owner writes its tables (the reading of SQL finds them)', () => {
    const missed = [...owners].flatMap(([table, paths]) =>
      paths.some((path) => tablesWrittenBy(files.get(path)!, path).has(table)) ? [] : [table],
    );
    expect(missed).toEqual([]);
  });

  it('a second writer is caught, in SQL, in a row lock and through a TypeORM repository', () => {
    const intruder = 'src/game/game.repository.ts';
    const tried = [
      `const sql = \`UPDATE users SET role = $2 WHERE id = $1\`;`,
      `const sql = 'INSERT INTO invoices (id) VALUES ($1)';`,
      `const sql = \`SELECT id FROM nodes WHERE id = \${x} FOR NO KEY UPDATE\`;`,
      `const sql = 'DELETE FROM audit_log WHERE id = $1';`,
      `this.tx.getRepository(Ticket).save(ticket);`,
      `const t: 'withdrawal_requests' = x; const sql = \`DELETE FROM \${t} WHERE id = $1\`;`,
    ];
    for (const line of tried) {
      const changed = new Map(files).set(intruder, `${files.get(intruder)}\n${line}\n`);
      expect(trespasses(owners, changed)).toHaveLength(1);
    }
    // Comments are not SQL, nor is an upsert's own `DO UPDATE SET`.
    const harmless = new Map(files).set(
      intruder,
      `${files.get(intruder)}\n// UPDATE users SET nothing\nconst s = 'ON CONFLICT DO UPDATE SET x = 1';\n`,
    );
    expect(trespasses(owners, harmless)).toEqual([]);
  });

  it('each entity lives in the feature of the file that writes its table', () => {
    const misplaced: string[] = [];
    for (const [file, text] of files) {
      for (const match of text.matchAll(/@Entity\('(\w+)'\)/g)) {
        const writers = owners.get(match[1]) ?? [];
        if (!writers.some((writer) => feature(writer) === feature(file))) {
          misplaced.push(`${match[1]}: ${file}`);
        }
      }
    }
    expect(misplaced).toEqual([]);
  });
});
