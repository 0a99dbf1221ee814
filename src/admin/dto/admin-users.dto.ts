import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  IsBoolean,
  IsIn,
  IsInt,
  IsNumber,
  IsOptional,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
  ValidateBy,
  ValidateIf,
} from 'class-validator';
import { PageQuery } from '../../common/pagination';
import { UserResponse } from '../../users/dto/user.response';
import { StaffCredentials } from '../../users/dto/staff.dto';
import { ROLES } from '../../users/entities/user.entity';
import { PARTNER_CODE_PATTERN } from '../../partners/partner-code-pattern';

export { PARTNER_CODE_PATTERN };
export const ROLE_FILTERS = [...ROLES, 'none'] as const;
export type RoleFilter = (typeof ROLE_FILTERS)[number];

/** A number with at most two decimal places, as numeric(5,2) stores it without rounding. */
function AtMostTwoDecimals(): PropertyDecorator {
  return ValidateBy({
    name: 'atMostTwoDecimals',
    validator: {
      // toFixed, not string splitting: 1e-7 has no '.' in its string form.
      validate: (value: unknown) =>
        typeof value === 'number' && Number.isFinite(value) && Number(value.toFixed(2)) === value,
      defaultMessage: () => 'must have at most 2 decimal places',
    },
  });
}

/** A byte count: a positive integer JSON number up to 2^53-1. */
function ByteCount(): PropertyDecorator {
  return (target, key) => {
    IsInt({ message: 'must be an integer number of bytes' })(target, key);
    Min(1, { message: 'must be at least 1' })(target, key);
    Max(Number.MAX_SAFE_INTEGER, { message: 'must be at most 2^53-1' })(target, key);
  };
}

/** A new moderator or support account. */
export class CreateStaffRequest extends StaffCredentials {}

export class CreatePartnerRequest extends StaffCredentials {
  @ApiProperty({ minimum: 0, maximum: 100, example: 12.5, description: 'up to 2 decimals' })
  @IsNumber({ allowNaN: false, allowInfinity: false }, { message: 'must be a number' })
  @Min(0, { message: 'must be at least 0' })
  @Max(100, { message: 'must be at most 100' })
  @AtMostTwoDecimals()
  commission_percent: number;

  @ApiPropertyOptional({
    pattern: PARTNER_CODE_PATTERN.source,
    description: 'generated (8 of a-z 0-9) when absent',
  })
  @IsOptional()
  @IsString()
  @Matches(PARTNER_CODE_PATTERN, { message: 'must be 3 to 32 of A-Z, a-z, 0-9, _ and -' })
  partner_code?: string;
}

export class NodeAccessRequest {
  @ApiProperty()
  @IsBoolean({ message: 'must be true or false' })
  can_manage_nodes: boolean;
}

export class UserTrafficLimitRequest {
  @ApiProperty({
    type: Number,
    nullable: true,
    minimum: 1,
    maximum: Number.MAX_SAFE_INTEGER,
    description: 'bytes; null follows the default limit',
  })
  @ValidateIf((request: UserTrafficLimitRequest) => request.traffic_limit_bytes !== null)
  @ByteCount()
  traffic_limit_bytes: number | null;
}

export class DefaultTrafficLimitRequest {
  @ApiProperty({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'bytes' })
  @ByteCount()
  default_bytes: number;
}

export class DefaultTrafficLimitResponse {
  @ApiProperty({ example: 107374182400, description: 'bytes' })
  default_bytes: number;
}

export class AdminUsersQuery extends PageQuery {
  @ApiPropertyOptional({
    description:
      'prefix (any case, a leading @ ignored) of the username or the Telegram username; also an exact tg_id when digits, an exact id when a UUID',
  })
  @IsOptional()
  @IsString()
  @MaxLength(100)
  // PostgreSQL refuses NUL in text: it must be a 400 here, not a database error.
  @Matches(/^[^\0]*$/, { message: 'must not contain NUL characters' })
  q?: string;

  @ApiPropertyOptional({ enum: ROLE_FILTERS, description: '`none`: ordinary accounts' })
  @IsOptional()
  @IsIn(ROLE_FILTERS)
  role?: RoleFilter;
}

export class AdminUsersPage {
  @ApiProperty({ type: [UserResponse] })
  items: UserResponse[];

  @ApiProperty({ type: String, nullable: true })
  next_cursor: string | null;
}
