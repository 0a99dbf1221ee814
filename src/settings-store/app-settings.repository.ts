import { Injectable } from '@nestjs/common';
import { TransactionHost } from '@nestjs-cls/transactional';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';

export const DEFAULT_TRAFFIC_LIMIT_KEY = 'traffic_limit_default_bytes';

/** The owner of `app_settings`: operator-changeable values. */
@Injectable()
export class AppSettingsRepository {
  constructor(private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>) {}

  async get(key: string): Promise<unknown> {
    const rows: { value: unknown }[] = await this.txHost.tx.query(
      'SELECT value FROM app_settings WHERE key = $1',
      [key],
    );
    return rows[0]?.value;
  }

  async set(key: string, value: unknown): Promise<void> {
    await this.txHost.tx.query(
      `INSERT INTO app_settings (key, value, updated_at) VALUES ($1, $2::jsonb, now())
       ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, updated_at = now()`,
      [key, JSON.stringify(value)],
    );
  }

  /** The stored default traffic limit in bytes (a string of digits), or null when none is stored. */
  async defaultTrafficLimit(): Promise<string | null> {
    const value = await this.get(DEFAULT_TRAFFIC_LIMIT_KEY);
    if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value);
    return typeof value === 'string' && /^\d+$/.test(value) ? value : null;
  }

  /** Stored as a JSON string of digits, as `AccountsRepository.getWithDefaults` and `defaultLimitSql` reads it. */
  async setDefaultTrafficLimit(bytes: string): Promise<void> {
    await this.set(DEFAULT_TRAFFIC_LIMIT_KEY, bytes);
  }
}
