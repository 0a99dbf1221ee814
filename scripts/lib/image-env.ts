import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The environment the production image sets for the service: the `ENV KEY=value` lines of the
 * Dockerfile's last stage. Tests and benchmarks that run the built service as the image runs it
 * take them from here, so the Dockerfile stays the one place they are written.
 */
export function imageEnvironment(root: string): Record<string, string> {
  const lines = readFileSync(join(root, 'Dockerfile'), 'utf8').split('\n');
  const lastFrom = lines.findLastIndex((line) => /^FROM\s/i.test(line));
  const env: Record<string, string> = {};
  for (const line of lines.slice(lastFrom + 1)) {
    if (!/^ENV\s/i.test(line)) continue;
    const pair = /^ENV\s+([A-Za-z_][A-Za-z0-9_]*)=(\S*)\s*$/i.exec(line);
    if (!pair) throw new Error(`Dockerfile: read only ENV lines of one KEY=value: ${line}`);
    env[pair[1]] = pair[2];
  }
  return env;
}
