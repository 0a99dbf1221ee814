import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsString, IsUUID, MaxLength } from 'class-validator';

export const MAX_LIMITS_USERS = 1000;

export const INVALID_REASONS = [
  'bad_token',
  'expired',
  'wrong_node',
  'used',
  'no_subscription',
  'traffic_exceeded',
  'blocked',
] as const;
export type InvalidReason = (typeof INVALID_REASONS)[number];

/** The longest `token` a validation takes (a session token is about 200 characters). */
export const MAX_TOKEN_LENGTH = 4096;

export class ValidateTokenRequest {
  @ApiProperty({ description: 'a session_token from GET /nodes/routing' })
  @IsString()
  @MaxLength(MAX_TOKEN_LENGTH)
  token: string;

  @ApiProperty({ format: 'uuid', description: 'the node asking' })
  @IsUUID('all', { message: 'must be a UUID' })
  node_id: string;
}

export class ValidateTokenResponse {
  @ApiProperty() valid: boolean;
  @ApiPropertyOptional({ enum: INVALID_REASONS, description: 'only when valid is false' })
  reason?: InvalidReason;
  @ApiPropertyOptional({ format: 'uuid' }) user_id?: string;
  @ApiPropertyOptional() traffic_limit_bytes?: number;
  @ApiPropertyOptional() traffic_used_bytes?: number;
  @ApiPropertyOptional({ format: 'date-time', description: 'when the subscription ends' })
  expires_at?: string;
}

export class DeviceTrafficRequest {
  @ApiProperty({ format: 'uuid' }) device_id: string;
  @ApiProperty({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }) bytes_up: number;
  @ApiProperty({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }) bytes_down: number;
}

export class TrafficEntryRequest {
  @ApiProperty({ format: 'uuid' }) user_id: string;
  @ApiProperty({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }) bytes_up: number;
  @ApiProperty({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER }) bytes_down: number;
  @ApiPropertyOptional({
    type: [DeviceTrafficRequest],
    description: "the user's bytes split by device (raw, for the device list)",
  })
  devices?: DeviceTrafficRequest[];
}

export class OnlineDeviceRequest {
  @ApiProperty({ format: 'uuid' }) device_id: string;
  @ApiProperty({ description: "the client's address as the node sees it" }) address: string;
  @ApiProperty({ format: 'date-time', description: 'when that address first connected' })
  since: string;
}

/** Documents the body; it is checked by TrafficReportPipe (10,000 entries, cheaply). */
export class TrafficReportRequest {
  @ApiProperty({ format: 'uuid' }) node_id: string;
  @ApiProperty({ format: 'uuid', description: "a repeat of this node's id counts nothing" })
  report_id: string;
  @ApiProperty({ type: [TrafficEntryRequest], maxItems: 10_000 })
  entries: TrafficEntryRequest[];
  @ApiPropertyOptional({
    type: [OnlineDeviceRequest],
    description: 'devices connected to the node now (one network address per device is kept)',
  })
  online?: OnlineDeviceRequest[];
}

export class TrafficReportResponse {
  @ApiProperty({ description: 'false when this report_id was applied before' }) applied: boolean;
  @ApiProperty({ type: [String], description: 'reported users now at or over their limit' })
  over_limit: string[];
  @ApiProperty({ description: 'reported users that do not exist (their entries were skipped)' })
  unknown_users: number;
  @ApiProperty({
    type: [String],
    description: "devices whose newest connection is on another node: close this node's",
  })
  close: string[];
}

export class LimitsQuery {
  @ApiProperty({ description: `comma-separated user ids, at most ${MAX_LIMITS_USERS}` })
  @Transform(({ value }: { value: unknown }) =>
    typeof value === 'string' ? value.split(',').filter((id) => id !== '') : value,
  )
  @IsArray({ message: 'must be a comma-separated list of user ids' })
  @ArrayMinSize(1, { message: 'must name at least one user' })
  @ArrayMaxSize(MAX_LIMITS_USERS, { message: `must name at most ${MAX_LIMITS_USERS} users` })
  @IsUUID('all', { each: true, message: 'must be UUIDs' })
  user_ids: string[];
}

export class UserLimitResponse {
  @ApiProperty({ format: 'uuid' }) user_id: string;
  @ApiProperty() traffic_limit_bytes: number;
  @ApiProperty() traffic_used_bytes: number;
  @ApiProperty({ description: 'the subscription runs now' }) active: boolean;
}
