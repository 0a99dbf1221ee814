import { Inject, Injectable, Logger } from '@nestjs/common';
import { AppError } from '../../common/errors';
import { type Settings } from '../../config/settings';
import { SETTINGS } from '../../config/settings.module';
import { Clock } from '../clock';
import { parseDecimal, type Rational } from '../money';
import { asRecord, requestJson, UpstreamError } from './upstream';

interface CachedRate {
  rate: Rational;
  fetchedAt: number;
}

/**
 * The price of one TON in a fiat currency, from tonapi's `GET /v2/rates`, cached RATE_CACHE_S per
 * currency. Each currency is asked for by its own code; concurrent misses share one request.
 */
@Injectable()
export class TonRates {
  private readonly logger = new Logger(TonRates.name);
  private readonly cache = new Map<string, CachedRate>();
  private readonly inFlight = new Map<string, Promise<Rational>>();

  constructor(
    @Inject(SETTINGS) private readonly settings: Settings,
    private readonly clock: Clock,
  ) {}

  /** Major units of `currency` per TON; 503 UPSTREAM_UNAVAILABLE when no fresh rate exists. */
  rate(currency: string): Promise<Rational> {
    const code = currency.toUpperCase();
    const cached = this.cache.get(code);
    if (cached && this.clock.now() - cached.fetchedAt < this.settings.rateCacheS * 1000) {
      return Promise.resolve(cached.rate);
    }
    let pending = this.inFlight.get(code);
    if (!pending) {
      pending = this.fetch(code).finally(() => this.inFlight.delete(code));
      this.inFlight.set(code, pending);
    }
    return pending;
  }

  private async fetch(code: string): Promise<Rational> {
    const url =
      `${this.settings.tonRatesUrl}/v2/rates?tokens=ton` +
      `&currencies=${encodeURIComponent(code.toLowerCase())}`;
    let rate: Rational | null;
    try {
      rate = readRate(await requestJson(url), code);
    } catch (error) {
      const reason = error instanceof UpstreamError ? error.message : String(error);
      this.logger.warn(`TON rate for ${code} unavailable: ${reason}`);
      throw unavailable(code);
    }
    if (!rate) {
      this.logger.warn(`TON rate for ${code} missing or not a positive number in the answer`);
      throw unavailable(code);
    }
    this.cache.set(code, { rate, fetchedAt: this.clock.now() });
    return rate;
  }
}

/**
 * `rates.TON.prices.<CODE>` of tonapi's answer. A JSON number arrives as a double: its shortest
 * decimal form (`String`) is the text the upstream sent for any rate of up to 15 significant digits.
 */
function readRate(body: unknown, code: string): Rational | null {
  const prices = asRecord(asRecord(asRecord(asRecord(body)?.rates)?.TON)?.prices);
  const value = prices?.[code];
  if (typeof value === 'number' && Number.isFinite(value)) return parseDecimal(String(value));
  if (typeof value === 'string') return parseDecimal(value);
  return null;
}

function unavailable(code: string): AppError {
  return new AppError('UPSTREAM_UNAVAILABLE', `the TON exchange rate for ${code} is unavailable`);
}
