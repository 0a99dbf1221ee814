import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const SCRIPT = resolve(__dirname, '../scripts/check-argon2.mjs');
const NODE_GYP_TRACE = 'gyp ERR! stack Error: connect ENETUNREACH nodejs.org';

/**
 * `npm ci`'s postinstall, in a project whose argon2 either loads or, like a prebuilt binary that does
 * not load here, throws; its source build (node-gyp-build) stands in for one that fails offline.
 */
function project(argon2Loads: boolean): string {
  const dir = mkdtempSync(join(tmpdir(), 'argon2-check-'));
  const argon2 = join(dir, 'node_modules', 'argon2');
  const builder = join(dir, 'node_modules', 'node-gyp-build');
  mkdirSync(argon2, { recursive: true });
  mkdirSync(builder, { recursive: true });
  writeFileSync(join(dir, 'package.json'), '{"name":"project"}');
  writeFileSync(join(argon2, 'package.json'), '{"name":"argon2","main":"index.js"}');
  writeFileSync(
    join(argon2, 'index.js'),
    argon2Loads ? 'module.exports = {};' : "throw new Error('No native build was found');",
  );
  writeFileSync(join(builder, 'package.json'), '{"name":"node-gyp-build"}');
  writeFileSync(
    join(builder, 'bin.js'),
    `console.error(${JSON.stringify(NODE_GYP_TRACE)}); process.exit(1);`,
  );
  return dir;
}

describe('the install check of argon2 (postinstall)', () => {
  const made: string[] = [];
  afterAll(() => made.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

  it('says nothing when argon2 loads', () => {
    const dir = project(true);
    made.push(dir);
    const run = spawnSync(process.execPath, [SCRIPT], { cwd: dir, encoding: 'utf8' });
    expect({ status: run.status, output: run.stdout + run.stderr }).toEqual({
      status: 0,
      output: '',
    });
  });

  it("fails with a sentence naming Node's headers, and keeps the build's trace in a file", () => {
    const dir = project(false);
    made.push(dir);
    const run = spawnSync(process.execPath, [SCRIPT], { cwd: dir, encoding: 'utf8' });
    expect(run.status).toBe(1);
    expect(run.stdout + run.stderr).toMatch(
      /argon2's prebuilt binary does not load on this machine, and building it from source failed: the build needs Node's headers/,
    );
    expect(run.stdout + run.stderr).not.toContain(NODE_GYP_TRACE);
    const log = join(dir, 'node_modules', 'argon2', 'build-output.log');
    expect(run.stderr).toContain(log);
    expect(readFileSync(log, 'utf8')).toContain(NODE_GYP_TRACE);
  });
});
