import { ApiProperty } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsInt, IsString, IsUUID, Length, Max, Min } from 'class-validator';
import { IsVisibleText } from '../../common/visible-text';
import { SWITCH_WINDOW_MS } from '../devices.constants';
import type { DeviceRecord } from '../devices.repository';
import { CLIENT_FORMATS } from '../formats/client-formats';

/** A device's name: what its owner calls it. */
export class DeviceNameRequest {
  @ApiProperty({ minLength: 1, maxLength: 40, example: 'Second phone' })
  @IsString()
  @Length(1, 40, { message: 'must be 1 to 40 characters' })
  @IsVisibleText()
  name: string;
}

export class DeviceResponse {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() name: string;
  @ApiProperty({
    enum: ['hwid', 'app', 'link'],
    description: 'told apart by the HWID its app sent, by the app, or a link of its own',
  })
  source: string;
  @ApiProperty({ type: String, nullable: true, description: 'what the app said of itself' })
  client: string | null;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) last_fetch_at: string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true, description: 'last traffic' })
  last_seen_at: string | null;
  @ApiProperty({ type: String, format: 'uuid', nullable: true }) last_node_id: string | null;
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'the last address with its last part hidden (203.0.113.x)',
  })
  address_hint: string | null;
  @ApiProperty() bytes_up: number;
  @ApiProperty() bytes_down: number;
  @ApiProperty({ description: 'changed node or network often in the last 10 minutes' })
  shared_suspected: boolean;
}

export class DeviceListResponse {
  @ApiProperty({ description: 'the account link: `<SUB_URL>/sub/<token>`' })
  subscription_url: string;
  @ApiProperty() device_limit: number;
  @ApiProperty({ type: [DeviceResponse] }) devices: DeviceResponse[];
}

export class StaffDeviceListResponse {
  @ApiProperty() device_limit: number;
  @ApiProperty({ type: [DeviceResponse] }) devices: DeviceResponse[];
}

export class CreatedDeviceResponse {
  @ApiProperty({ type: DeviceResponse }) device: DeviceResponse;
  @ApiProperty({ description: "the device's own link" }) subscription_url: string;
}

export class SubscriptionUrlResponse {
  @ApiProperty() subscription_url: string;
}

export function toDeviceResponse(device: DeviceRecord, switchesSuspect: number): DeviceResponse {
  const recent =
    device.switchesSince !== null && Date.now() - device.switchesSince.getTime() < SWITCH_WINDOW_MS;
  return {
    id: device.id,
    name: device.name,
    source: device.source,
    client: device.client,
    created_at: device.createdAt.toISOString(),
    last_fetch_at: device.lastFetchAt?.toISOString() ?? null,
    last_seen_at: device.lastSeenAt?.toISOString() ?? null,
    last_node_id: device.lastNodeId,
    address_hint: device.addressHint,
    bytes_up: Number(device.bytesUp),
    bytes_down: Number(device.bytesDown),
    shared_suspected: recent && device.switches > switchesSuspect,
  };
}

/** `?format=` of the link: a client format, or `info` (the subscription page's figures). */
export const LINK_FORMATS = [...CLIENT_FORMATS, 'info'] as const;
export type LinkFormat = (typeof LINK_FORMATS)[number];

/** `GET /internal/credentials`: the node, and the version it has (0: none). */
export class CredentialsQuery {
  @ApiProperty({ format: 'uuid' })
  @IsUUID('all', { message: 'must be a UUID' })
  node_id: string;

  @ApiProperty({ minimum: 0, description: 'the version the node has; 0 asks for its whole set' })
  @Transform(({ value }: { value: unknown }) =>
    typeof value === 'string' && /^\d{1,16}$/.test(value) ? Number(value) : NaN,
  )
  @IsInt({ message: 'must be a whole number' })
  @Min(0)
  @Max(Number.MAX_SAFE_INTEGER)
  since: number;
}

export class CredentialResponse {
  @ApiProperty({ format: 'uuid' }) device_id: string;
  @ApiProperty({ format: 'uuid' }) user_id: string;
  @ApiProperty({ format: 'uuid' }) vless_id: string;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) expires_at: string | null;
}

export class CredentialsResponse {
  @ApiProperty() version: number;
  @ApiProperty({ description: 'replace the whole set with `upsert`' }) full: boolean;
  @ApiProperty({ type: [CredentialResponse] }) upsert: CredentialResponse[];
  @ApiProperty({ type: [String], description: 'device ids to remove' }) remove: string[];
}
