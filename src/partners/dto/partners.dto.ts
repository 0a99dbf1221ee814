import { ApiProperty } from '@nestjs/swagger';
import { IsString, Matches } from 'class-validator';
import { PARTNER_CODE_PATTERN } from '../../admin/dto/admin-users.dto';
import { PageQuery } from '../../common/pagination';
import type { CommissionRecord } from '../partners.repository';
import type { Balance, Earnings } from '../partners.service';

export class AttachPartnerRequest {
  @ApiProperty({ pattern: PARTNER_CODE_PATTERN.source, example: 'k3x9q2mz' })
  @IsString()
  @Matches(PARTNER_CODE_PATTERN, { message: 'must be 3 to 32 of A-Z, a-z, 0-9, _ and -' })
  partner_code: string;
}

/** `?limit=&cursor=` page the `recent` commissions. */
export class EarningsQuery extends PageQuery {}

export class BalanceView {
  @ApiProperty({ example: 'TON' })
  currency: string;

  @ApiProperty({ description: 'minor units: every commission', example: '154320986' })
  earned: string;

  @ApiProperty({ description: 'minor units: pending and approved withdrawals', example: '0' })
  requested: string;

  @ApiProperty({ description: 'minor units: paid withdrawals', example: '0' })
  paid: string;

  @ApiProperty({
    description: 'minor units: earned − requested − paid; never negative',
    example: '154320986',
  })
  available: string;

  static from(balance: Balance): BalanceView {
    return {
      currency: balance.currency,
      earned: balance.earned.toString(),
      requested: balance.requested.toString(),
      paid: balance.paid.toString(),
      available: balance.available.toString(),
    };
  }
}

export class CommissionView {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ format: 'uuid' })
  invoice_id: string;

  @ApiProperty({ format: 'uuid' })
  buyer_id: string;

  @ApiProperty({ example: 'monthly' })
  plan_name: string;

  @ApiProperty({ example: 'TON' })
  currency: string;

  @ApiProperty({ description: "the plan's price in minor units of `currency`", example: '499' })
  price_minor: string;

  @ApiProperty({ description: 'the percent in force when it was earned', example: 12.5 })
  percent: number;

  @ApiProperty({ description: 'minor units: price × percent / 100, rounded down', example: '62' })
  amount: string;

  @ApiProperty({ format: 'date-time' })
  created_at: string;

  static from(commission: CommissionRecord): CommissionView {
    return {
      id: commission.id,
      invoice_id: commission.invoiceId,
      buyer_id: commission.buyerId,
      plan_name: commission.planName,
      currency: commission.currency,
      price_minor: commission.priceMinor,
      percent: Number(commission.percent),
      amount: commission.amountMinor,
      created_at: commission.createdAt.toISOString(),
    };
  }
}

export class EarningsResponse {
  @ApiProperty({ type: String, nullable: true })
  partner_code: string | null;

  @ApiProperty({ type: Number, nullable: true, example: 12.5 })
  commission_percent: number | null;

  @ApiProperty({ type: [BalanceView], description: 'one per currency earned or withdrawn in' })
  balances: BalanceView[];

  @ApiProperty({ type: [CommissionView], description: 'commissions, newest first, one page' })
  recent: CommissionView[];

  @ApiProperty({
    type: String,
    nullable: true,
    description: 'the `cursor` of the next page of `recent`; null on the last',
  })
  next_cursor: string | null;

  static from(earnings: Earnings): EarningsResponse {
    return {
      partner_code: earnings.partnerCode,
      commission_percent:
        earnings.commissionPercent === null ? null : Number(earnings.commissionPercent),
      balances: earnings.balances.map((balance) => BalanceView.from(balance)),
      recent: earnings.recent.items.map((commission) => CommissionView.from(commission)),
      next_cursor: earnings.recent.next_cursor,
    };
  }
}
