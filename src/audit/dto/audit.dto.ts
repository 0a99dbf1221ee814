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
