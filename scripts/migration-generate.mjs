// `npm run migration:generate -- <name>`: writes migrations/NNNN-<name>.ts with the SQL that brings a
// database migrated to the newest migration in line with the entities. Review it, then add the class
// to migrations/index.ts.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { root } from './lib/typescript.mjs';
import { withTempDatabase } from './lib/temp-database.mjs';

const name = process.argv[2];
if (!name || !/^[a-z0-9]+(-[a-z0-9]+)*$/.test(name)) {
  console.error('usage: npm run migration:generate -- <kebab-case-name>');
  process.exit(2);
}
const numbers = readdirSync(join(root, 'migrations'))
  .map((file) => /^(\d{4})-/.exec(file)?.[1])
  .filter(Boolean)
  .map(Number);
const number = String(Math.max(0, ...numbers) + 1).padStart(4, '0');
const className = name.replace(/(^|-)([a-z0-9])/g, (_m, _d, c) => c.toUpperCase()) + number;
const out = mkdtempSync(join(tmpdir(), 'migration-'));

const code = await withTempDatabase('generate', async (url) => {
  const env = { ...process.env, DATABASE_URL: url };
  const cli = ['--no-install', 'typeorm-ts-node-commonjs', '-d', 'src/cli-data-source.ts'];
  let result = spawnSync('npx', [...cli, 'migration:run'], { cwd: root, env, stdio: 'inherit' });
  if (result.status !== 0) return result.status ?? 1;
  result = spawnSync('npx', [...cli, 'migration:generate', join(out, 'Generated'), '--pretty'], {
    cwd: root,
    env,
    stdio: 'inherit',
  });
  return result.status ?? 1;
});
const generated = code === 0 ? readFileSync(join(out, readdirSync(out)[0]), 'utf8') : '';
rmSync(out, { recursive: true, force: true });
if (code !== 0) process.exit(code);

const body = generated.slice(generated.indexOf('    public async up'), generated.lastIndexOf('}'));
const file = join(root, 'migrations', `${number}-${name}.ts`);
writeFileSync(
  file,
  `import type { MigrationInterface, QueryRunner } from 'typeorm';\n\n` +
    `export class ${className} implements MigrationInterface {\n` +
    `  name = '${className.slice(0, -4)}${number.padStart(13, '0')}';\n\n${body.replace(/^ {4}/gm, '  ')}}\n`,
);
console.log(`wrote ${file}; review it and add ${className} to migrations/index.ts`);
