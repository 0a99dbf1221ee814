import { APPS, platformOf, PLATFORMS } from '../../web/src/connect/apps';

const LINK = 'https://sub.example.com/sub/AbC-123_x?format=sing-box&x=1';

function linkOf(platform: (typeof PLATFORMS)[number], name: string): string {
  const app = APPS[platform].find((candidate) => candidate.name === name);
  if (!app) throw new Error(`${name} is not offered on ${platform}`);
  return app.deepLink(LINK);
}

describe('the apps of the Connect section and the subscription page', () => {
  it('offers the contract’s apps on each platform', () => {
    const names = Object.fromEntries(
      PLATFORMS.map((platform) => [platform, APPS[platform].map((app) => app.name)]),
    );
    expect(names).toEqual({
      ios: ['Happ', 'Streisand', 'v2RayTun'],
      android: ['v2rayNG', 'Hiddify', 'Happ'],
      windows: ['Hiddify', 'Clash Verge Rev', 'sing-box'],
      macos: ['Hiddify', 'Clash Verge Rev', 'sing-box'],
      linux: ['Hiddify', 'Clash Verge Rev', 'sing-box'],
    });
  });

  it('builds each deep link of the contract, the link encoded where it is a query parameter', () => {
    expect(linkOf('ios', 'Happ')).toBe(`happ://add/${LINK}`);
    expect(linkOf('ios', 'Streisand')).toBe(`streisand://import/${LINK}`);
    expect(linkOf('ios', 'v2RayTun')).toBe(`v2raytun://import/${LINK}`);
    expect(linkOf('android', 'Hiddify')).toBe(`hiddify://import/${LINK}`);
    for (const [platform, name, prefix] of [
      ['android', 'v2rayNG', 'v2rayng://install-config'],
      ['linux', 'Clash Verge Rev', 'clash://install-config'],
      ['macos', 'sing-box', 'sing-box://import-remote-profile'],
    ] as const) {
      const built = linkOf(platform, name);
      expect(built.startsWith(`${prefix}?url=`)).toBe(true);
      // The link comes back whole from the parameter: its own ? and & did not end it.
      const params = new URLSearchParams(built.slice(built.indexOf('?') + 1));
      expect([...params.keys()]).toEqual(['url']);
      expect(params.get('url')).toBe(LINK);
    }
  });

  it('opens the tab of the visitor’s platform', () => {
    const agents: [string, string][] = [
      ['Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15', 'ios'],
      ['Mozilla/5.0 (iPad; CPU OS 16_0 like Mac OS X)', 'ios'],
      ['Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 Chrome/124.0', 'android'],
      ['Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 Chrome/124.0', 'windows'],
      ['Mozilla/5.0 (Macintosh; Intel Mac OS X 14_4) AppleWebKit/605.1.15 Safari/605.1', 'macos'],
      ['Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 Chrome/124.0', 'linux'],
      ['curl/8.5.0', 'windows'],
    ];
    expect(agents.map(([agent]) => platformOf(agent))).toEqual(agents.map(([, p]) => p));
  });
});
