import { applyDecorators } from '@nestjs/common';
import { Type } from 'class-transformer';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  IsInt,
  IsNumber,
  IsOptional,
  IsString,
  isFQDN,
  isIP,
  Matches,
  Max,
  MaxLength,
  Min,
  MinLength,
  ValidateBy,
  ValidateIf,
} from 'class-validator';
import { utils as sshUtils } from 'ssh2';
import { PageQuery } from '../../common/pagination';
import { IsVisibleText } from '../../common/visible-text';

export const HOST_KEY_SHA256 = /^SHA256:[A-Za-z0-9+/]{43}$/;
const SSH_USER = /^[a-z_][a-z0-9_-]{0,31}$/;

const isHostName = (value: unknown): boolean =>
  typeof value === 'string' &&
  value.length <= 253 &&
  (isIP(value) || isFQDN(value, { require_tld: false, allow_underscores: false }));

/** A host name or an IP address, nothing else (no scheme, port, path or spaces). */
function IsHost(): PropertyDecorator {
  return ValidateBy({
    name: 'isHost',
    validator: {
      validate: isHostName,
      defaultMessage: () => 'must be a host name or an IP address',
    },
  });
}

/** An unencrypted private key ssh2 can sign with (OpenSSH, PEM RSA/EC/ed25519). */
function IsSshPrivateKey(): PropertyDecorator {
  return ValidateBy({
    name: 'isSshPrivateKey',
    validator: {
      validate: (value: unknown) => {
        if (typeof value !== 'string' || value.length > 16_384) return false;
        const parsed = sshUtils.parseKey(value);
        return !(parsed instanceof Error) && !Array.isArray(parsed) && parsed.isPrivateKey();
      },
      defaultMessage: () => 'must be an unencrypted SSH private key',
    },
  });
}

/** 0.1 to 10 with at most three decimals, as numeric(6,3) keeps it. */
function IsMultiplier(): PropertyDecorator {
  return (target, key) => {
    IsNumber({ allowNaN: false, allowInfinity: false }, { message: 'must be a number' })(
      target,
      key,
    );
    Min(0.1, { message: 'must be at least 0.1' })(target, key);
    Max(10, { message: 'must be at most 10' })(target, key);
    ValidateBy({
      name: 'atMostThreeDecimals',
      validator: {
        validate: (value: unknown) =>
          typeof value === 'number' && Number(value.toFixed(3)) === value,
        defaultMessage: () => 'must have at most 3 decimal places',
      },
    })(target, key);
  };
}

function IsPort(): PropertyDecorator {
  return (target, key) => {
    IsInt({ message: 'must be a whole number' })(target, key);
    Min(1, { message: 'must be at least 1' })(target, key);
    Max(65535, { message: 'must be at most 65535' })(target, key);
  };
}

const DOMAIN = ValidateBy({
  name: 'isDomain',
  validator: {
    validate: (value: unknown) => typeof value === 'string' && value.length <= 253 && isFQDN(value),
    defaultMessage: () => 'must be a domain name',
  },
});

/** The rules of each field, shared by create (required or optional) and PATCH (when present). */
const RULES = {
  name: () => applyDecorators(IsString(), MinLength(1), MaxLength(100), IsVisibleText()),
  host: () => IsHost(),
  port: () => IsPort(),
  sshUser: () =>
    applyDecorators(IsString(), Matches(SSH_USER, { message: 'must be a Unix user name' })),
  sshPrivateKey: () => IsSshPrivateKey(),
  hostKey: () =>
    applyDecorators(
      IsString(),
      Matches(HOST_KEY_SHA256, { message: 'must be an OpenSSH fingerprint SHA256:<base64>' }),
    ),
  sni: () => DOMAIN,
  multiplier: () => IsMultiplier(),
};

/** In a PATCH: checked when sent; null is refused like any other wrong value. */
const WhenSent = (): PropertyDecorator => ValidateIf((_object, value) => value !== undefined);

export class CreateNodeRequest {
  @ApiProperty({ minLength: 1, maxLength: 100 })
  @RULES.name()
  name: string;

  @ApiProperty({ description: 'host name or IP address; the tunnel is reached there too' })
  @RULES.host()
  host: string;

  @ApiPropertyOptional({ minimum: 1, maximum: 65535, default: 22 })
  @IsOptional()
  @RULES.port()
  ssh_port?: number;

  @ApiPropertyOptional({ default: 'root', pattern: SSH_USER.source })
  @IsOptional()
  @RULES.sshUser()
  ssh_user?: string;

  @ApiProperty({ description: 'write-only: stored encrypted, never returned' })
  @RULES.sshPrivateKey()
  ssh_private_key: string;

  @ApiPropertyOptional({
    nullable: true,
    type: String,
    pattern: HOST_KEY_SHA256.source,
    description: 'OpenSSH fingerprint; unset = the first key seen is recorded, then required',
  })
  @IsOptional()
  @RULES.hostKey()
  ssh_host_key_sha256?: string | null;

  @ApiPropertyOptional({ minimum: 1, maximum: 65535, default: 443 })
  @IsOptional()
  @RULES.port()
  tunnel_port?: number;

  @ApiPropertyOptional({
    minimum: 1,
    maximum: 65535,
    default: 8443,
    description:
      "the agent's HTTPS admission port on the tunnel host; must differ from tunnel_port",
  })
  @IsOptional()
  @RULES.port()
  admission_port?: number;

  @ApiProperty({ description: 'the REALITY camouflage domain (serverNames, dest = <sni>:443)' })
  @RULES.sni()
  sni_domain: string;

  @ApiPropertyOptional({ minimum: 0.1, maximum: 10, default: 1 })
  @IsOptional()
  @RULES.multiplier()
  traffic_multiplier?: number;
}

/** Any creatable field; `ssh_host_key_sha256: null` forgets the pinned key. */
export class UpdateNodeRequest {
  @ApiPropertyOptional({ minLength: 1, maxLength: 100 })
  @WhenSent()
  @RULES.name()
  name?: string;

  @ApiPropertyOptional()
  @WhenSent()
  @RULES.host()
  host?: string;

  @ApiPropertyOptional({ minimum: 1, maximum: 65535 })
  @WhenSent()
  @RULES.port()
  ssh_port?: number;

  @ApiPropertyOptional({ pattern: SSH_USER.source })
  @WhenSent()
  @RULES.sshUser()
  ssh_user?: string;

  @ApiPropertyOptional({ description: 'write-only: stored encrypted, never returned' })
  @WhenSent()
  @RULES.sshPrivateKey()
  ssh_private_key?: string;

  @ApiPropertyOptional({ nullable: true, type: String, pattern: HOST_KEY_SHA256.source })
  @IsOptional()
  @RULES.hostKey()
  ssh_host_key_sha256?: string | null;

  @ApiPropertyOptional({ minimum: 1, maximum: 65535 })
  @WhenSent()
  @RULES.port()
  tunnel_port?: number;

  @ApiPropertyOptional({ minimum: 1, maximum: 65535, description: 'must differ from tunnel_port' })
  @WhenSent()
  @RULES.port()
  admission_port?: number;

  @ApiPropertyOptional()
  @WhenSent()
  @RULES.sni()
  sni_domain?: string;

  @ApiPropertyOptional({ minimum: 0.1, maximum: 10 })
  @WhenSent()
  @RULES.multiplier()
  traffic_multiplier?: number;
}

export class NodePageQuery extends PageQuery {}

export const DEFAULT_TRAFFIC_DAYS = 30;
export const MAX_TRAFFIC_DAYS = 366;

/** How many UTC days of a node's traffic to read, today included. */
export class NodeTrafficQuery {
  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: MAX_TRAFFIC_DAYS,
    default: DEFAULT_TRAFFIC_DAYS,
    description: 'UTC days, today included',
  })
  @IsOptional()
  @Type(() => Number)
  @IsInt({ message: 'must be an integer' })
  @Min(1, { message: 'must be at least 1' })
  @Max(MAX_TRAFFIC_DAYS, { message: `must be at most ${MAX_TRAFFIC_DAYS}` })
  days?: number;
}
