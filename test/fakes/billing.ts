import { Address } from '@ton/core';
import { startTestApp, type TestApp } from '../harness/app';
import { startFakeBotApi, type FakeBotApi } from './telegram-bot-api';
import { startFakeTonapi, type FakeTonapi } from './tonapi';
import { startFakeToncenter, type FakeToncenter } from './toncenter';

export const WALLET = new Address(0, Buffer.alloc(32, 7));
export const BOT_TOKEN = '123456:TEST-billing-bot-token';
export const PROVIDER_TOKEN = '284685063:TEST:provider-token';

export interface BillingWorld {
  t: TestApp;
  tonapi: FakeTonapi;
  toncenter: FakeToncenter;
  botApi: FakeBotApi;
  close(): Promise<void>;
}

/**
 * The app pointed at local tonapi (with `rates`), toncenter and Bot API fakes, receiving TON at
 * WALLET. `env` and `options` go to startTestApp.
 */
export async function startBillingWorld(
  rates: Record<string, string>,
  env: Record<string, string> = {},
  options: Parameters<typeof startTestApp>[1] = {},
): Promise<BillingWorld> {
  const [tonapi, toncenter, botApi] = await Promise.all([
    startFakeTonapi(rates),
    startFakeToncenter(),
    startFakeBotApi(),
  ]);
  const t = await startTestApp(
    {
      TON_RATES_URL: tonapi.url,
      TON_API_URL: toncenter.url,
      TELEGRAM_API_ROOT: botApi.url,
      BOT_TOKEN,
      TELEGRAM_PAYMENT_PROVIDER_TOKEN: PROVIDER_TOKEN,
      TON_WALLET_ADDRESS: WALLET.toString(),
      ...env,
    },
    options,
  );
  return {
    t,
    tonapi,
    toncenter,
    botApi,
    async close() {
      await t.close();
      await Promise.all([tonapi.close(), toncenter.close(), botApi.close()]);
    },
  };
}
