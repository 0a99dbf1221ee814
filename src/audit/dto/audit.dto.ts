import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';

export const DEFAULT_PAGE_LIMIT = 50;

/** `?limit=&cursor=` of every paged list. */
export class PageQuery {
  @ApiPropertyOptional({ minimum: 1, maximum: 100, default: DEFAULT_PAGE_LIMIT })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(100)
  limit?: number;

  @ApiPropertyOptional({ description: 'next_cursor of the previous page' })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  cursor?: string;
}

export class AuditEntryResponse {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ type: String, format: 'uuid', nullable: true, description: 'who acted' })
  actor_id: string | null;

  @ApiProperty({ example: 'user.traffic_limit_changed' })
  action: string;

  @ApiProperty({ example: 'user' })
  target_type: string;

  @ApiProperty({ type: String, nullable: true, description: 'a UUID, or a setting key' })
  target_id: string | null;

  @ApiProperty({ type: 'object', nullable: true, additionalProperties: true })
  before: unknown;

  @ApiProperty({ type: 'object', nullable: true, additionalProperties: true })
  after: unknown;

  @ApiProperty({ format: 'date-time' })
  created_at: string;
}

export class AuditPage {
  @ApiProperty({ type: [AuditEntryResponse] })
  items: AuditEntryResponse[];

  @ApiProperty({ type: String, nullable: true })
  next_cursor: string | null;
}
