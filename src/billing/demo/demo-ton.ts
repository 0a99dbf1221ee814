import { Address } from '@ton/core';
import type { Settings } from '../../config/settings';
import { startFakeTonapi } from './fake-tonapi';
import { startFakeToncenter } from './fake-toncenter';

/** The TON prices of the demo mode's fake rates (major units per TON). */
export const DEMO_TON_RATES: Record<string, string> = {
  USD: '5',
  EUR: '4.6',
  GBP: '4',
  RUB: '450',
};

/** The receiving wallet of the demo mode when TON_WALLET_ADDRESS is unset: no one's real wallet. */
export const DEMO_WALLET = new Address(0, Buffer.alloc(32, 0xde)).toString();

export interface DemoTon {
  /** The settings with the TON provider pointed at the fakes. */
  settings: Settings;
  close(): Promise<void>;
}

/**
 * DEMO_PAYMENTS=true (development only; the settings refuse it in production): local fake tonapi
 * rates and toncenter chain, the very ones the tests use, on 127.0.0.1, and the settings pointed at
 * them.
 */
export async function startDemoTon(settings: Settings): Promise<DemoTon> {
  const [tonapi, toncenter] = await Promise.all([
    startFakeTonapi(DEMO_TON_RATES),
    startFakeToncenter(),
  ]);
  return {
    settings: Object.freeze({
      ...settings,
      tonRatesUrl: tonapi.url,
      tonApiUrl: toncenter.url,
      tonApiKey: null,
      tonWalletAddress: settings.tonWalletAddress ?? DEMO_WALLET,
    }),
    close: async () => {
      await Promise.all([tonapi.close(), toncenter.close()]);
    },
  };
}
