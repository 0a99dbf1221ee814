import type { PlanRecord } from '../plans.repository';
import { type ArgumentMetadata, Injectable, type PipeTransform } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  IsBoolean,
  IsIn,
  IsInt,
  IsObject,
  IsOptional,
  IsString,
  Length,
  Max,
  Min,
  registerDecorator,
  ValidateNested,
  type ValidationOptions,
} from 'class-validator';
import { validationFailed } from '../../common/errors';
import { IsVisibleText } from '../../common/visible-text';
import {
  PLAN_STARTS,
  type PlanStart,
  TRAFFIC_RESETS,
  type TrafficReset,
} from '../../users/traffic-reset';
import { isKnownCurrency } from '../money';

export const PLAN_NAME = /^[a-z0-9_-]{1,32}$/;
export const CURRENCY_CODE = /^[A-Z]{3}$/;
/**
 * A positive whole number of minor units, as a string, of at most 12 digits (under 10^10 of a
 * two-decimal currency): far inside a bigint, also once converted or summed.
 */
const PRICE = /^[1-9]\d{0,11}$/;

/** The plan name in the path of `PUT /admin/plans/{name}`. */
@Injectable()
export class PlanNamePipe implements PipeTransform<string, string> {
  transform(value: string, metadata: ArgumentMetadata): string {
    if (typeof value !== 'string' || !PLAN_NAME.test(value)) {
      throw validationFailed([
        {
          field: metadata.data ?? 'name',
          message: 'must match ^[a-z0-9_-]{1,32}$',
          rule: 'matches',
        },
      ]);
    }
    return value;
  }
}

/** `{USD: "499", EUR: "459"}`: known upper-case currency codes, positive whole minor units. */
function IsPriceMap(options?: ValidationOptions): PropertyDecorator {
  return (target: object, propertyName: string | symbol) =>
    registerDecorator({
      name: 'isPriceMap',
      target: target.constructor,
      propertyName: String(propertyName),
      options: {
        message:
          'must map at least one known currency code (e.g. USD) to a positive whole number of minor units (at most 12 digits) as a string',
        ...options,
      },
      validator: {
        validate(value: unknown): boolean {
          if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
          const entries = Object.entries(value as Record<string, unknown>);
          return (
            entries.length > 0 &&
            entries.length <= 100 &&
            entries.every(
              ([code, amount]) =>
                CURRENCY_CODE.test(code) &&
                isKnownCurrency(code) &&
                typeof amount === 'string' &&
                PRICE.test(amount),
            )
          );
        },
      },
    });
}

/** A plan's name and short description in one language, as buyers read them. */
export class PlanDisplayText {
  @ApiProperty({ minLength: 1, maxLength: 40, example: 'Monthly' })
  @IsString()
  @Length(1, 40, { message: 'must be 1 to 40 characters' })
  @IsVisibleText()
  name: string;

  @ApiPropertyOptional({ minLength: 1, maxLength: 200, example: '30 days, 100 GB, 3 devices' })
  @IsOptional()
  @IsString()
  @Length(1, 200, { message: 'must be 1 to 200 characters' })
  @IsVisibleText()
  description?: string;
}

/** The languages of the apps and the bot; a plan without one is shown by its slug there. */
export class PlanDisplay {
  @ApiPropertyOptional({ type: PlanDisplayText })
  @IsOptional()
  @ValidateNested()
  @Type(() => PlanDisplayText)
  en?: PlanDisplayText;

  @ApiPropertyOptional({ type: PlanDisplayText })
  @IsOptional()
  @ValidateNested()
  @Type(() => PlanDisplayText)
  ru?: PlanDisplayText;
}

export class UpsertPlanRequest {
  @ApiProperty({ minimum: 1, maximum: 3650, example: 30 })
  @IsInt()
  @Min(1)
  @Max(3650)
  duration_days: number;

  @ApiProperty({ minimum: 0, description: 'bytes per subscription period', example: 107374182400 })
  @IsInt()
  @Min(0)
  @Max(Number.MAX_SAFE_INTEGER)
  traffic_limit_bytes: number;

  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'string', pattern: '^[1-9][0-9]{0,11}$' },
    description: 'currency code → price in its minor units; replaces every earlier price',
    example: { USD: '499', RUB: '45000' },
  })
  @IsObject()
  @IsPriceMap()
  prices: Record<string, string>;

  @ApiProperty({ description: 'inactive plans are not listed and cannot be bought' })
  @IsBoolean()
  active: boolean;

  @ApiPropertyOptional({
    minimum: 1,
    maximum: 20,
    description:
      "devices per subscriber; omitted: the plan's own, DEVICE_LIMIT_DEFAULT for a new plan",
  })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(20)
  device_limit?: number;

  @ApiPropertyOptional({
    enum: TRAFFIC_RESETS,
    description:
      "when used traffic starts again from zero (00:00 UTC; Monday for week; reset_day for month; every 30 days from the subscription's start for rolling_month); omitted: the plan's own, none for a new plan",
  })
  @IsOptional()
  @IsIn(TRAFFIC_RESETS)
  traffic_reset?: TrafficReset;

  @ApiPropertyOptional({
    minimum: 1,
    maximum: 28,
    description: "the day of the month of a month reset; omitted: the plan's own, 1 for a new plan",
  })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(28)
  reset_day?: number;

  @ApiPropertyOptional({
    enum: PLAN_STARTS,
    description:
      "on_first_use: the days begin with the first counted traffic (or after on_hold_max_days); omitted: the plan's own, on_purchase for a new plan",
  })
  @IsOptional()
  @IsIn(PLAN_STARTS)
  starts?: PlanStart;

  @ApiPropertyOptional({
    minimum: 1,
    maximum: 365,
    description:
      "the longest an on_first_use subscription waits; omitted: the plan's own, 30 for a new plan",
  })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(365)
  on_hold_max_days?: number;

  @ApiPropertyOptional({
    type: PlanDisplay,
    description:
      "the plan's name and short description per language (en, ru), shown instead of the slug; replaces every earlier one; omitted: the plan's own, none for a new plan",
  })
  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => PlanDisplay)
  display?: PlanDisplay;
}

export class PlanResponse {
  @ApiProperty({ example: 'monthly' })
  name: string;

  @ApiProperty({ example: 30 })
  duration_days: number;

  @ApiProperty({ example: 107374182400 })
  traffic_limit_bytes: number;

  @ApiProperty({
    type: 'object',
    additionalProperties: { type: 'string' },
    example: { USD: '499' },
    description: 'currency code → price in its minor units',
  })
  prices: Record<string, string>;

  @ApiProperty({ example: 3, description: 'devices per subscriber' })
  device_limit: number;

  @ApiProperty({ enum: TRAFFIC_RESETS, example: 'month' })
  traffic_reset: TrafficReset;

  @ApiProperty({ example: 1, description: 'the day of the month of a month reset' })
  reset_day: number;

  @ApiProperty({ enum: PLAN_STARTS, example: 'on_purchase' })
  starts: PlanStart;

  @ApiProperty({ example: 30, description: 'the longest an on_first_use subscription waits' })
  on_hold_max_days: number;

  @ApiProperty({
    type: PlanDisplay,
    description:
      'name and short description per language; a language without one shows the slug (`name`)',
  })
  display: PlanDisplay;
}

export class AdminPlanResponse extends PlanResponse {
  @ApiProperty()
  active: boolean;
}

export function toPlanResponse(plan: PlanRecord): AdminPlanResponse {
  return {
    name: plan.name,
    duration_days: plan.durationDays,
    traffic_limit_bytes: Number(plan.trafficLimitBytes),
    prices: plan.prices,
    device_limit: plan.deviceLimit,
    traffic_reset: plan.trafficReset,
    reset_day: plan.resetDay,
    starts: plan.starts,
    on_hold_max_days: plan.onHoldMaxDays,
    display: plan.display,
    active: plan.active,
  };
}

/** A plan as the public list shows it: on sale, so without `active`. */
export function toPublicPlanResponse(plan: PlanRecord): PlanResponse {
  const { active: _active, ...view } = toPlanResponse(plan);
  return view;
}
