// Run by `npm ci` / `npm install` (the project's postinstall): argon2, which hashes passwords, must
// load. npm skips argon2's own install script (package.json allowScripts), which on a machine where
// the prebuilt binary does not load falls back to a source build and fails with a node-gyp trace.
// Here that build is run only when needed, with Node's own headers when they are installed, and a
// failure ends the install with one paragraph saying what the build needs.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const requireHere = createRequire(join(process.cwd(), 'package.json'));
const loads = () =>
  spawnSync(process.execPath, ['-e', "require('argon2')"], { stdio: 'ignore' }).status === 0;

if (!loads()) {
  const argon2Dir = dirname(requireHere.resolve('argon2/package.json'));
  const builder = createRequire(join(argon2Dir, 'package.json')).resolve('node-gyp-build/bin.js');
  const build = spawnSync(process.execPath, [builder], {
    cwd: argon2Dir,
    env: { ...process.env, ZERO_AR_DATE: '1', ...installedHeaders() },
    encoding: 'utf8',
  });
  const log = join(argon2Dir, 'build-output.log');
  writeFileSync(log, `${build.stdout ?? ''}${build.stderr ?? ''}${build.error ?? ''}`);
  if (build.status !== 0 || !loads()) {
    process.stderr.write(
      "\nargon2's prebuilt binary does not load on this machine, and building it from source " +
        "failed: the build needs Node's headers (for Node " +
        process.version +
        ', downloaded by node-gyp from nodejs.org, or installed with Node and named by ' +
        'npm_config_nodedir=<Node install prefix>), python3 and a C++ compiler (Debian: ' +
        `apt install python3 make g++). The build's output is in ${log}.\n\n`,
    );
    process.exit(1);
  }
}

/**
 * The headers installed with this Node (`<prefix>/include/node`), when they match its version:
 * node-gyp would otherwise download them, which fails offline.
 */
function installedHeaders() {
  if (process.env.npm_config_nodedir) return {};
  const prefix = process.config.variables.node_prefix;
  const header = join(prefix, 'include', 'node', 'node_version.h');
  if (!existsSync(header)) return {};
  const text = readFileSync(header, 'utf8');
  const part = (name) => new RegExp(`#define NODE_${name}_VERSION (\\d+)`).exec(text)?.[1];
  const version = `v${part('MAJOR')}.${part('MINOR')}.${part('PATCH')}`;
  return version === process.version ? { npm_config_nodedir: prefix } : {};
}
