import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const SCRIPT = readFileSync(join(__dirname, '..', 'deploy', 'node', 'provision.sh'), 'utf8');

/** One shell function of the provisioning script, as written there. */
function shellFunction(name: string): string {
  const match = new RegExp(`^${name}\\(\\) \\{\\n[\\s\\S]*?\\n\\}\\n`, 'm').exec(SCRIPT);
  if (!match) throw new Error(`provision.sh has no function ${name}`);
  return match[0];
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/**
 * Runs the script's own `install_xray` on an x86_64 machine whose download answers `archive`, with
 * `pinned` as the recorded digest; curl, unzip and install are stand-ins that only note their call.
 */
function installXray(archive: string, pinned: string, given = '') {
  const dir = mkdtempSync(join(tmpdir(), 'provision-'));
  const calls = join(dir, 'calls');
  const program = [
    'set -euo pipefail',
    `XRAY_VERSION=v25.10.15 XRAY_BIN=${dir}/xray XRAY_SHA256_64='${pinned}' XRAY_SHA256_ARM64_V8A=''`,
    `XRAY_SHA256_GIVEN='${given}'`,
    'uname() { echo x86_64; }',
    `curl() { echo curl >>'${calls}'; printf '%s' '${archive}' >"$3"; }`,
    `unzip() { echo unzip >>'${calls}'; }`,
    `install() { echo install >>'${calls}'; }`,
    shellFunction('verify_sha256'),
    shellFunction('install_xray'),
    'install_xray',
  ].join('\n');
  const run = spawnSync('bash', ['-c', program], { encoding: 'utf8', timeout: 10_000 });
  const called = existsSync(calls) ? readFileSync(calls, 'utf8').trim().split('\n') : [];
  return { code: run.status, stderr: run.stderr, called };
}

describe('provision.sh installs only the Xray archive it pinned', () => {
  const archive = 'the Xray release archive';

  it('installs a download whose SHA-256 is the pinned one', () => {
    expect(installXray(archive, sha256(archive))).toEqual({
      code: 0,
      stderr: '',
      called: ['curl', 'unzip', 'install', 'install', 'install'],
    });
  });

  it('refuses a download with another SHA-256 before unpacking anything', () => {
    const run = installXray('a tampered archive', sha256(archive));
    expect(run.code).toBe(6);
    expect(run.stderr).toContain(`is not the pinned ${sha256(archive)}`);
    expect(run.called).toEqual(['curl']);
  });

  it('downloads nothing when no digest is recorded for the architecture', () => {
    const run = installXray(archive, '');
    expect(run.code).toBe(6);
    expect(run.stderr).toContain('no SHA-256 for Xray v25.10.15');
    expect(run.stderr).toContain('set XRAY_ARCHIVE_SHA256');
    expect(run.called).toEqual([]);
  });

  it("takes the service's XRAY_ARCHIVE_SHA256 (the third argument) over the recorded digest", () => {
    expect(installXray(archive, '', sha256(archive)).code).toBe(0);
    const run = installXray(archive, sha256(archive), sha256('another archive'));
    expect(run.code).toBe(6);
    expect(run.called).toEqual(['curl']);
  });
});
