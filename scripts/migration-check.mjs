// `npm run migration:check`: fails when the entities and the migrations disagree. Applies every
// migration to an empty database, then asks TypeORM whether the entities need any further change.
import { spawnSync } from 'node:child_process';
import { root } from './lib/typescript.mjs';
import { withTempDatabase } from './lib/temp-database.mjs';

const code = await withTempDatabase('drift_check', async (url) => {
  const env = { ...process.env, DATABASE_URL: url };
  const cli = ['typeorm-ts-node-commonjs', '-d', 'src/cli-data-source.ts'];
  for (const args of [['migration:run'], ['migration:generate', 'migrations/drift', '--check']]) {
    const result = spawnSync('npx', ['--no-install', ...cli, ...args], {
      cwd: root,
      env,
      stdio: 'inherit',
    });
    if (result.status !== 0) return result.status ?? 1;
  }
  return 0;
});
if (code === 0) console.log('migration:check: entities and migrations agree');
process.exit(code);
