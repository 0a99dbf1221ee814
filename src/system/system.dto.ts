import { ApiProperty } from '@nestjs/swagger';

export class ConfigResponse {
  @ApiProperty({ type: String, nullable: true, example: 'my_vpn_bot' })
  bot_username: string | null;

  @ApiProperty({ type: String, nullable: true, example: 'https://grafana.example.com' })
  grafana_url: string | null;
}

export class HealthResponse {
  @ApiProperty({ enum: ['ok', 'error'] })
  status: 'ok' | 'error';

  @ApiProperty({ enum: ['up', 'down'] })
  db: 'up' | 'down';
}
