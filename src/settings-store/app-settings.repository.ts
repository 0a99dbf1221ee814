import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';

export const DEFAULT_TRAFFIC_LIMIT_KEY = 'traffic_limit_default_bytes';

/** Operator-changeable values kept in `app_settings`. */
@Injectable()
export class AppSettingsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async get(key: string, manager: EntityManager = this.dataSource.manager): Promise<unknown> {
    const rows: { value: unknown }[] = await manager.query(
      'SELECT value FROM app_settings WHERE key = $1',
      [key],
    );
    return rows[0]?.value;
  }

  async set(
    key: string,
    value: unknown,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<void> {
    await manager.query(
      `INSERT INTO app_settings (key, value, updated_at) VALUES ($1, $2::jsonb, now())
       ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, updated_at = now()`,
      [key, JSON.stringify(value)],
    );
  }
}
