import type { AuditRow } from '../audit.repository';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, IsUUID, Matches, MaxLength } from 'class-validator';
import { PageQuery } from '../../common/pagination';

/** `?action=&actor_id=&target_type=&target_id=`: each given filter must match exactly. */
export class AuditQuery extends PageQuery {
  @ApiPropertyOptional({ example: 'plan.changed', description: 'an action, exactly' })
  @IsOptional()
  @IsString()
  @MaxLength(64)
  @Matches(/^[a-z0-9_.]+$/, { message: 'must be an action such as plan.changed' })
  action?: string;

  @ApiPropertyOptional({ format: 'uuid', description: 'the account that acted' })
  @IsOptional()
  @IsUUID('all', { message: 'must be a UUID' })
  actor_id?: string;

  @ApiPropertyOptional({ example: 'plan', description: 'what kind of thing was changed' })
  @IsOptional()
  @IsString()
  @MaxLength(32)
  @Matches(/^[a-z_]+$/, { message: 'must be a target type such as user or plan' })
  target_type?: string;

  @ApiPropertyOptional({ description: 'the changed thing: a UUID, a plan name or a setting key' })
  @IsOptional()
  @IsString()
  @MaxLength(100)
  // PostgreSQL refuses NUL in text: it must be a 400 here, not a database error.
  @Matches(/^[^\0]+$/, { message: 'must not contain NUL characters' })
  target_id?: string;
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

export function toAuditEntryResponse(row: AuditRow): AuditEntryResponse {
  return {
    id: row.id,
    actor_id: row.actor_id,
    action: row.action,
    target_type: row.target_type,
    target_id: row.target_id,
    before: row.before,
    after: row.after,
    created_at: row.created_at.toISOString(),
  };
}
