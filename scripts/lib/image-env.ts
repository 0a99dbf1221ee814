import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The environment the production image sets for the service: the `ENV KEY=value` lines of the
 * Dockerfile's last stage. Tests and benchmarks that run the built service as the image runs it
 * take them from here, so the Dockerfile stays the one place they are written.
 */
export function imageEnvironment(root: string): Record<string, string> {
  const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8');
  const lastStage = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
  const env: Record<string, string> = {};
  for (const [, key, value] of lastStage.matchAll(/^ENV\s+([A-Za-z_][A-Za-z0-9_]*)=(.*)$/gm)) {
    env[key] = value.trim().replace(/^"(.*)"$/, '$1');
  }
  return env;
}
