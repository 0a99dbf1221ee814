import { appName, formatForAgent } from './client-formats';

describe('the format each client app gets, by its User-Agent', () => {
  it.each([
    ['Happ/2.3.1', 'xray-json'],
    ['Streisand/1.6.54', 'xray-json'],
    ['v2RayTun/4.0', 'xray-json'],
    ['INCY/1.2', 'xray-json'],
    ['V2Box/9.0', 'xray-json'],
    ['v2rayNG/1.8.29', 'xray-json'],
    ['v2rayNG/1.9.1', 'xray-json'],
    ['v2rayNG/1.8.28', 'base64'],
    ['v2rayNG/1.8.5', 'base64'],
    ['v2rayN/6.40', 'xray-json'],
    ['v2rayN/7.2.0', 'xray-json'],
    ['v2rayN/6.39', 'base64'],
    ['clash-verge/v2.2.3', 'mihomo'],
    ['ClashMetaForAndroid/2.11.5.Meta', 'mihomo'],
    ['clash.meta', 'mihomo'],
    ['FlClash/v0.8.80', 'mihomo'],
    ['mihomo/1.19.0', 'mihomo'],
    ['Stash/2.4.7 Clash/1.9.0', 'mihomo'],
    ['koala-clash/1.0', 'mihomo'],
    ['prizrak-box/1.0', 'mihomo'],
    ['SFA/1.11.4 (Android 14)', 'sing-box'],
    ['SFI/1.11.4 (iOS 18)', 'sing-box'],
    ['SFM/1.11.4', 'sing-box'],
    ['SFT/1.11.4', 'sing-box'],
    ['sing-box 1.11.4', 'sing-box'],
    ['HiddifyNext/2.5.7 (android) like ClashMeta v2ray sing-box', 'sing-box'],
    ['Karing/1.1.2', 'sing-box'],
    ['Shadowrocket/2.2.60', 'base64'],
    ['curl/8.5.0', 'base64'],
    ['', 'base64'],
  ])('%s → %s', (agent, format) => {
    expect(formatForAgent(agent)).toBe(format);
  });

  it('names a device by the first product token of the User-Agent, lower-cased', () => {
    expect(appName('v2rayNG/1.8.5')).toBe('v2rayng');
    expect(appName('clash-verge/v2.2.3')).toBe('clash-verge');
    expect(appName('SFA/1.11.4 (Android 14)')).toBe('sfa');
    expect(appName('  ')).toBeNull();
    expect(appName(undefined)).toBeNull();
    expect(appName('/weird')).toBeNull();
  });
});
