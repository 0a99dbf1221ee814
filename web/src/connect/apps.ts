/**
 * The client apps a subscriber may import the link with, per platform, and each app's deep link
 * (the contract's "Subscription link and devices"). One table for the account's Connect section
 * and the subscription page, so both always offer the same buttons.
 */

export type Platform = 'ios' | 'android' | 'windows' | 'macos' | 'linux';

export const PLATFORMS: readonly Platform[] = ['ios', 'android', 'windows', 'macos', 'linux'];

export interface ClientApp {
  name: string;
  /** The address that opens the app with the subscription link. */
  deepLink: (link: string) => string;
}

// A link in the path is passed as it is (the apps read the rest of the address as the link); a link
// in a query parameter is percent-encoded, or its own `?format=`/`&` would end the parameter.
const HAPP: ClientApp = { name: 'Happ', deepLink: (link) => `happ://add/${link}` };
const STREISAND: ClientApp = {
  name: 'Streisand',
  deepLink: (link) => `streisand://import/${link}`,
};
const V2RAYTUN: ClientApp = { name: 'v2RayTun', deepLink: (link) => `v2raytun://import/${link}` };
const V2RAYNG: ClientApp = {
  name: 'v2rayNG',
  deepLink: (link) => `v2rayng://install-config?url=${encodeURIComponent(link)}`,
};
const HIDDIFY: ClientApp = { name: 'Hiddify', deepLink: (link) => `hiddify://import/${link}` };
const CLASH_VERGE: ClientApp = {
  name: 'Clash Verge Rev',
  deepLink: (link) => `clash://install-config?url=${encodeURIComponent(link)}`,
};
const SING_BOX: ClientApp = {
  name: 'sing-box',
  deepLink: (link) => `sing-box://import-remote-profile?url=${encodeURIComponent(link)}`,
};

const DESKTOP = [HIDDIFY, CLASH_VERGE, SING_BOX];

export const APPS: Readonly<Record<Platform, readonly ClientApp[]>> = {
  ios: [HAPP, STREISAND, V2RAYTUN],
  android: [V2RAYNG, HIDDIFY, HAPP],
  windows: DESKTOP,
  macos: DESKTOP,
  linux: DESKTOP,
};

/** The platform a browser runs on, by its User-Agent, to open its tab first; Windows otherwise. */
export function platformOf(userAgent: string): Platform {
  if (/iPhone|iPad|iPod/i.test(userAgent)) return 'ios';
  if (/Android/i.test(userAgent)) return 'android';
  if (/Macintosh|Mac OS X/i.test(userAgent)) return 'macos';
  if (/Linux|X11|CrOS/i.test(userAgent)) return 'linux';
  return 'windows';
}
