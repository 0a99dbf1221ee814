import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Address } from '@ton/core';
import { IsIn, IsOptional, IsString, Length, Matches, ValidateBy } from 'class-validator';
import { CURRENCY_CODE } from '../../billing/dto/plan.dto';
import { isKnownCurrency, TON_CURRENCY } from '../../billing/money';
import { PageQuery, type Page } from '../../common/pagination';
import { IsVisibleText } from '../../common/visible-text';
import { WITHDRAWAL_STATES, type WithdrawalState } from '../entities/withdrawal-request.entity';
import type { WithdrawalRecord } from '../partners.repository';

/** A positive whole number of minor units of at most 18 digits: always inside a bigint. */
const AMOUNT = /^[1-9]\d{0,17}$/;
/** Printable text: no control characters (line breaks included). */
const PRINTABLE = /^[^\p{Cc}]+$/u;

/** Whether `text` is a TON address in any form `@ton/core` reads (raw or user-friendly). */
function isTonAddress(text: string): boolean {
  try {
    Address.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** A known currency code such as USD or TON. */
function IsKnownCurrency(): PropertyDecorator {
  return ValidateBy({
    name: 'isKnownCurrency',
    validator: {
      validate: (value: unknown) =>
        typeof value === 'string' && CURRENCY_CODE.test(value) && isKnownCurrency(value),
      defaultMessage: () => 'must be a known upper-case currency code such as USD or TON',
    },
  });
}

/** For TON, a TON address; for any other currency, an account reference as given. */
function IsDestinationFor(): PropertyDecorator {
  return ValidateBy({
    name: 'isDestinationFor',
    validator: {
      validate: (value: unknown, args) => {
        if (typeof value !== 'string' || !PRINTABLE.test(value)) return false;
        const currency = (args?.object as { currency?: unknown } | undefined)?.currency;
        return currency !== TON_CURRENCY || isTonAddress(value);
      },
      defaultMessage: (args) =>
        (args?.object as { currency?: unknown } | undefined)?.currency === TON_CURRENCY
          ? 'must be a TON address'
          : 'must be printable text',
    },
  });
}

export class CreateWithdrawalRequest {
  @ApiProperty({
    pattern: AMOUNT.source,
    example: '100000000',
    description: 'minor units of `currency`, at most what is available',
  })
  @IsString()
  @Matches(AMOUNT, {
    message: 'must be a positive whole number of minor units (at most 18 digits) as a string',
  })
  amount: string;

  @ApiProperty({ pattern: CURRENCY_CODE.source, example: 'TON' })
  @IsKnownCurrency()
  currency: string;

  @ApiProperty({
    minLength: 1,
    maxLength: 200,
    description: 'a TON address when `currency` is TON; otherwise an account reference',
  })
  @IsString()
  @Length(1, 200, { message: 'must be 1 to 200 characters' })
  @IsVisibleText({ joiners: false })
  @IsDestinationFor()
  destination: string;
}

export class RejectWithdrawalRequest {
  @ApiProperty({ minLength: 1, maxLength: 500 })
  @IsString()
  @Length(1, 500, { message: 'must be 1 to 500 characters' })
  @IsVisibleText()
  reason: string;
}

export class PaidWithdrawalRequest {
  @ApiPropertyOptional({ minLength: 1, maxLength: 200, description: 'the payout transaction' })
  @IsOptional()
  @IsString()
  @Length(1, 200, { message: 'must be 1 to 200 characters' })
  @IsVisibleText({ joiners: false })
  tx_ref?: string;
}

export class AdminWithdrawalQuery extends PageQuery {
  @ApiPropertyOptional({ enum: WITHDRAWAL_STATES })
  @IsOptional()
  @IsIn(WITHDRAWAL_STATES)
  status?: WithdrawalState;
}

export class WithdrawalResponse {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ format: 'uuid' })
  partner_id: string;

  @ApiProperty({ description: 'minor units of `currency`', example: '100000000' })
  amount: string;

  @ApiProperty({ example: 'TON' })
  currency: string;

  @ApiProperty()
  destination: string;

  @ApiProperty({ enum: WITHDRAWAL_STATES })
  status: WithdrawalState;

  @ApiProperty({ type: String, nullable: true, description: 'why it was rejected' })
  reason: string | null;

  @ApiProperty({ type: String, nullable: true, description: 'the payout transaction' })
  tx_ref: string | null;

  @ApiProperty({
    type: String,
    format: 'uuid',
    nullable: true,
    description: 'the last staff to decide',
  })
  decided_by: string | null;

  @ApiProperty({ format: 'date-time' })
  created_at: string;

  @ApiProperty({ format: 'date-time' })
  updated_at: string;

  static from(withdrawal: WithdrawalRecord): WithdrawalResponse {
    return {
      id: withdrawal.id,
      partner_id: withdrawal.partnerId,
      amount: withdrawal.amount,
      currency: withdrawal.currency,
      destination: withdrawal.destination,
      status: withdrawal.status,
      reason: withdrawal.reason,
      tx_ref: withdrawal.txRef,
      decided_by: withdrawal.decidedBy,
      created_at: withdrawal.createdAt.toISOString(),
      updated_at: withdrawal.updatedAt.toISOString(),
    };
  }
}

export class WithdrawalPageResponse {
  @ApiProperty({ type: [WithdrawalResponse] })
  items: WithdrawalResponse[];

  @ApiProperty({ type: String, nullable: true })
  next_cursor: string | null;

  static from(page: Page<WithdrawalRecord>): WithdrawalPageResponse {
    return {
      items: page.items.map((withdrawal) => WithdrawalResponse.from(withdrawal)),
      next_cursor: page.next_cursor,
    };
  }
}
