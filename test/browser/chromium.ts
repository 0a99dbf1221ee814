import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import type Sparticuz from '@sparticuz/chromium' with { 'resolution-mode': 'require' };

// The package's first "types" condition names its ES module build; the CommonJS build loads here.
const sparticuz = createRequire(__filename)('@sparticuz/chromium') as typeof Sparticuz;

const DEBIAN_CHROMIUM = '/usr/bin/chromium';

/**
 * Flags for a headless Chromium on a machine with a closed network. Not @sparticuz/chromium's own
 * list: that one turns off web security, and the test is about CORS and the origin check.
 */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-quic',
  '--no-first-run',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * Debian's Chromium when it is installed; otherwise the build that @sparticuz/chromium ships inside
 * its npm package (unpacked into the temporary folder on first use), so `npm ci && npm test` needs
 * no browser on the machine.
 */
export async function chromiumExecutable(): Promise<string> {
  if (existsSync(DEBIAN_CHROMIUM)) return DEBIAN_CHROMIUM;
  return sparticuz.executablePath();
}
