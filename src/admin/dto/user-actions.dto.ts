import { ApiProperty, ApiPropertyOptional, PickType } from '@nestjs/swagger';
import {
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  Length,
  Matches,
  Max,
  Min,
  NotEquals,
} from 'class-validator';
import { PLAN_NAME } from '../../billing/dto/plan.dto';
import { IsVisibleText } from '../../common/visible-text';
import { StaffCredentials } from '../../users/dto/staff.dto';
import { PLAN_STARTS, type PlanStart } from '../../users/traffic-reset';

/** The most days one move of a subscription may add or take away. */
export const MAX_MOVE_DAYS = 3650;

/** Why staff acted on an account: kept in the audit log. */
export class ReasonRequest {
  @ApiProperty({ minLength: 1, maxLength: 200, description: 'kept in the audit log' })
  @IsString()
  @Length(1, 200, { message: 'must be 1 to 200 characters' })
  @IsVisibleText()
  reason: string;
}

export class MoveSubscriptionRequest extends ReasonRequest {
  @ApiProperty({
    type: 'integer',
    minimum: -MAX_MOVE_DAYS,
    maximum: MAX_MOVE_DAYS,
    description: 'days to add (negative: to take away, never below now); not 0',
  })
  @IsInt({ message: 'must be an integer' })
  @Min(-MAX_MOVE_DAYS, { message: `must be at least -${MAX_MOVE_DAYS}` })
  @Max(MAX_MOVE_DAYS, { message: `must be at most ${MAX_MOVE_DAYS}` })
  @NotEquals(0, { message: 'must not be 0' })
  days: number;

  @ApiPropertyOptional({
    pattern: PLAN_NAME.source,
    description: "the subscription's plan when the user has none running (default `manual`)",
  })
  @IsOptional()
  @IsString()
  @Matches(PLAN_NAME, { message: 'must match ^[a-z0-9_-]{1,32}$' })
  plan_name?: string;

  @ApiPropertyOptional({
    enum: PLAN_STARTS,
    description:
      'on_first_use: a subscription this starts (days > 0, none running) waits for the first connection, at most on_hold_max_days; omitted: on_purchase',
  })
  @IsOptional()
  @IsIn(PLAN_STARTS)
  starts?: PlanStart;

  @ApiPropertyOptional({ minimum: 1, maximum: 365, description: 'for on_first_use; omitted: 30' })
  @IsOptional()
  @IsInt({ message: 'must be an integer' })
  @Min(1)
  @Max(365)
  on_hold_max_days?: number;
}

/** A staff account's new password, by the rule of staff passwords. */
export class StaffPasswordRequest extends PickType(StaffCredentials, ['password'] as const) {}
