/**
 * Which format each client app is given, by its User-Agent: the one table, tested per client in
 * `client-formats.spec.ts`. Apps not named here get `base64`, which every app reads.
 */
export const CLIENT_FORMATS = ['base64', 'xray-json', 'mihomo', 'sing-box'] as const;
export type ClientFormat = (typeof CLIENT_FORMATS)[number];

interface ClientRule {
  /** Matched against the User-Agent, case-insensitively. */
  agent: RegExp;
  format: ClientFormat;
  /** The first version that reads this format; older ones get `base64`. */
  since?: [number, number, number];
}

const RULES: readonly ClientRule[] = [
  // Complete Xray configs: the apps on Xray-core that import a JSON array of them.
  { agent: /^happ\//i, format: 'xray-json' },
  { agent: /^streisand/i, format: 'xray-json' },
  { agent: /^v2raytun\//i, format: 'xray-json' },
  { agent: /^incy/i, format: 'xray-json' },
  { agent: /^v2box/i, format: 'xray-json' },
  { agent: /^v2rayng\//i, format: 'xray-json', since: [1, 8, 29] },
  { agent: /^v2rayn\//i, format: 'xray-json', since: [6, 40, 0] },
  // sing-box JSON (before the Clash names: Hiddify says it is "like ClashMeta"): its own apps (SFA, SFI, SFM, SFT) and those built on it.
  { agent: /^(sfa|sfi|sfm|sft)\//i, format: 'sing-box' },
  { agent: /^sing-box/i, format: 'sing-box' },
  { agent: /^hiddify/i, format: 'sing-box' },
  { agent: /^karing/i, format: 'sing-box' },
  // Clash Meta (mihomo) YAML.
  { agent: /clash-verge|clash\.meta|clashmeta|clash-meta/i, format: 'mihomo' },
  { agent: /^flclash/i, format: 'mihomo' },
  { agent: /^mihomo/i, format: 'mihomo' },
  { agent: /^stash\//i, format: 'mihomo' },
  { agent: /^koala-clash/i, format: 'mihomo' },
  { agent: /^prizrak-box/i, format: 'mihomo' },
  { agent: /^clash/i, format: 'mihomo' },
];

/** The `major.minor.patch` right after the first `/` of the User-Agent. */
function versionOf(userAgent: string): [number, number, number] | null {
  const match = /^[^/]+\/v?(\d+)(?:\.(\d+))?(?:\.(\d+))?/.exec(userAgent);
  if (!match) return null;
  return [Number(match[1]), Number(match[2] ?? 0), Number(match[3] ?? 0)];
}

function atLeast(version: [number, number, number], since: [number, number, number]): boolean {
  for (let i = 0; i < 3; i++) {
    if (version[i] !== since[i]) return version[i] > since[i];
  }
  return true;
}

/** The format for an app that sent this User-Agent. */
export function formatForAgent(userAgent: string | undefined): ClientFormat {
  const agent = (userAgent ?? '').trim();
  for (const rule of RULES) {
    if (!rule.agent.test(agent)) continue;
    if (!rule.since) return rule.format;
    const version = versionOf(agent);
    return version && atLeast(version, rule.since) ? rule.format : 'base64';
  }
  return 'base64';
}

/**
 * The app's name as a device is known by when the app sends no HWID: the User-Agent's first
 * product token, lower-cased (`v2rayng`, `clash-verge`, `sfa`); null when there is none.
 */
export function appName(userAgent: string | undefined): string | null {
  const token = /^[A-Za-z0-9][A-Za-z0-9._+-]{0,39}/.exec((userAgent ?? '').trim());
  return token ? token[0].toLowerCase() : null;
}
