import type { AuditRow } from '../audit.repository';
import { ApiProperty } from '@nestjs/swagger';

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
