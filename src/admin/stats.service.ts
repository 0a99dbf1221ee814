import { Injectable } from '@nestjs/common';
import { Transactional } from '@nestjs-cls/transactional';
import type { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { type StatsDay, StatsRepository, type StatsTotals } from './stats.repository';

/** The figures of the business for the staff overview. */
@Injectable()
export class StatsService {
  constructor(private readonly stats: StatsRepository) {}

  /**
   * Today's totals and the last `days` UTC days, read in one REPEATABLE READ transaction so the
   * totals and the days are of one moment.
   */
  @Transactional<TransactionalAdapterTypeOrm>({ isolationLevel: 'REPEATABLE READ' })
  async figures(days: number): Promise<{ totals: StatsTotals; days: StatsDay[] }> {
    return { totals: await this.stats.totals(), days: await this.stats.days(days) };
  }
}
