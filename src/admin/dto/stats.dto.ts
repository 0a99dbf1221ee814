import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import { IsInt, IsOptional, Max, Min } from 'class-validator';
import type { StatsDay, StatsTotals } from '../stats.repository';

export const DEFAULT_STATS_DAYS = 30;
export const MAX_STATS_DAYS = 366;

export class StatsQuery {
  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: MAX_STATS_DAYS,
    default: DEFAULT_STATS_DAYS,
    description: 'UTC days, today included',
  })
  // `?days=` (empty), as a form with the field left blank sends it, means the default. The
  // original is read: by the time this runs, the conversion to a number has made '' a 0.
  @Transform(({ value, obj }: { value: unknown; obj: Record<string, unknown> }) =>
    obj.days === '' ? undefined : value,
  )
  @IsOptional()
  @Type(() => Number)
  @IsInt({ message: 'must be an integer' })
  @Min(1, { message: 'must be at least 1' })
  @Max(MAX_STATS_DAYS, { message: `must be at most ${MAX_STATS_DAYS}` })
  days?: number;
}

export class StatsTotalsResponse {
  @ApiProperty({ description: 'every account, staff included' })
  users: number;

  @ApiProperty({ description: 'accounts whose subscription runs now' })
  active_subscriptions: number;

  @ApiProperty()
  open_tickets: number;

  @ApiProperty()
  pending_withdrawals: number;

  @ApiProperty({
    description:
      'nodes not deleted, provisioned, whose last health check passed and whose agent reported ' +
      'within two report periods',
  })
  nodes_online: number;

  @ApiProperty({ description: 'nodes not deleted' })
  nodes_total: number;

  @ApiProperty({ description: 'subscriptions waiting for their first connection (on_first_use)' })
  waiting_first_use: number;
}

export class StatsDayResponse {
  @ApiProperty({ format: 'date', example: '2026-11-24', description: 'a UTC day' })
  date: string;

  @ApiProperty({ description: 'accounts created that day' })
  signups: number;

  @ApiProperty({ description: 'invoices paid that day' })
  paid_invoices: number;

  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'string' },
    example: { USD: '499', TON: '2500000000' },
    description:
      "money paid invoices brought that day: currency → minor units (TON in nanotons for `ton` invoices, the invoice's currency otherwise)",
  })
  received: Record<string, string>;

  @ApiProperty({
    description: 'bytes the nodes carried that day (up and down, before multipliers)',
  })
  traffic_bytes: number;

  @ApiProperty({
    description: 'traffic warnings (80% and 100% of the limit) the bot sent that day',
  })
  traffic_warnings: number;
}

export class StatsResponse {
  @ApiProperty({ type: StatsTotalsResponse })
  totals: StatsTotalsResponse;

  @ApiProperty({ type: [StatsDayResponse], description: 'one entry per UTC day, oldest first' })
  days: StatsDayResponse[];
}

export function toStatsResponse(totals: StatsTotals, days: StatsDay[]): StatsResponse {
  return {
    totals: {
      users: totals.users,
      active_subscriptions: totals.activeSubscriptions,
      open_tickets: totals.openTickets,
      pending_withdrawals: totals.pendingWithdrawals,
      nodes_online: totals.nodesOnline,
      nodes_total: totals.nodesTotal,
      waiting_first_use: totals.waitingFirstUse,
    },
    days: days.map((day) => ({
      date: day.date,
      signups: day.signups,
      paid_invoices: day.paidInvoices,
      received: day.received,
      traffic_bytes: Number(day.trafficBytes),
      traffic_warnings: day.trafficWarnings,
    })),
  };
}
