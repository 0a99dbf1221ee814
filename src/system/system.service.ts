import { HttpStatus, Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { RawResponseException } from '../common/raw-response.exception';
import { configuredPaymentMethods } from '../billing/providers/payment-methods';
import { readBotUsername } from '../config/runtime';
import { type Settings } from '../config/settings';
import { SETTINGS } from '../config/settings.module';
import { Drain } from './drain';
import type { ConfigResponse, HealthResponse } from './system.dto';

const HEALTH_TIMEOUT_MS = 2_000;

@Injectable()
export class SystemService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly drain: Drain,
    @Inject(SETTINGS) private readonly settings: Settings,
  ) {}

  publicConfig(): ConfigResponse {
    return {
      bot_username: readBotUsername(),
      grafana_url: this.settings.grafanaUrl,
      payment_methods: configuredPaymentMethods(this.settings),
      demo_payments: this.settings.demoPayments,
    };
  }

  /** 503 while the database does not answer, and from the moment a shutdown begins. */
  async health(): Promise<HealthResponse> {
    const db = (await this.databaseAnswers()) ? 'up' : 'down';
    if (db === 'up' && !this.drain.isDraining) return { status: 'ok', db };
    throw new RawResponseException({ status: 'error', db }, HttpStatus.SERVICE_UNAVAILABLE);
  }

  private async databaseAnswers(): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), HEALTH_TIMEOUT_MS);
    });
    const probe = this.dataSource
      .query('SELECT 1')
      .then(() => true)
      .catch(() => false);
    try {
      return await Promise.race([probe, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }
}
