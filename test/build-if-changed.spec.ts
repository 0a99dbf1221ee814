/**
 * `npm start` builds only when something the build reads changed (scripts/build-if-changed.mjs):
 * run in a folder whose `npm run build` stands in for the real one, writing the outputs and
 * counting its runs.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const SCRIPT = join(__dirname, '..', 'scripts', 'build-if-changed.mjs');

const FAKE_BUILD = [
  "const fs = require('node:fs');",
  "for (const f of ['dist/main.js', 'agent/dist/agent.js', 'web/dist/index.html']) {",
  "  fs.mkdirSync(require('node:path').dirname(f), { recursive: true });",
  "  fs.writeFileSync(f, '');",
  '}',
  "fs.appendFileSync('builds', 'x');",
].join(' ');

describe('npm start’s build', () => {
  let dir: string;
  const builds = () => readFileSync(join(dir, 'builds'), 'utf8').length;
  const start = () => {
    const run = spawnSync(process.execPath, [SCRIPT], { cwd: dir, encoding: 'utf8' });
    expect(run.status).toBe(0);
    return run.stdout;
  };
  /**
   * Waits 150 ms, as a person between saving a file and starting: the script dates a build 100 ms
   * before it began, so a file saved in those 100 ms counts as changed once more at the next start
   * (CI once started within them).
   */
  const later = () => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 150);
  /** A file written a minute ago, as though before the last build. */
  const writeOld = (path: string, text: string) => {
    writeFileSync(join(dir, path), text);
    const past = new Date(Date.now() - 60_000);
    utimesSync(join(dir, path), past, past);
  };

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'build-if-changed-'));
    writeFileSync(
      join(dir, 'package.json'),
      JSON.stringify({ scripts: { build: `node -e "${FAKE_BUILD}"` } }),
    );
    mkdirSync(join(dir, 'src'));
    writeOld('src/main.ts', 'one');
    const past = new Date(Date.now() - 60_000);
    utimesSync(join(dir, 'src'), past, past);
    utimesSync(join(dir, 'package.json'), past, past);
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('builds on a clean clone, then starts without building while nothing changed', () => {
    start();
    expect(builds()).toBe(1);
    expect(start()).toContain('Nothing changed since the last build');
    expect(builds()).toBe(1);
  });

  it('builds again after a source file changes, is added or is removed', () => {
    start();
    writeFileSync(join(dir, 'src/main.ts'), 'two');
    later();
    start();
    expect(builds()).toBe(2);
    writeFileSync(join(dir, 'src/extra.ts'), 'three');
    later();
    start();
    expect(builds()).toBe(3);
    rmSync(join(dir, 'src/extra.ts'));
    later();
    start();
    expect(builds()).toBe(4);
    start();
    expect(builds()).toBe(4);
  });

  it('builds again when an output is missing', () => {
    start();
    rmSync(join(dir, 'web/dist/index.html'));
    start();
    expect(builds()).toBe(2);
  });
});
