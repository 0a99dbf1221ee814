import type { LoginCode, LoginCodePoll } from '../login-code';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  IsInt,
  IsNotEmpty,
  IsOptional,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
} from 'class-validator';
import { UserResponse } from '../../users/dto/user.response';
import { RECOVERY_CODE, TOTP_CODE } from './totp.dto';

export class SeedLoginRequest {
  @ApiProperty({ example: 'k3f9-2m8q-…' })
  @IsString()
  @IsNotEmpty()
  @MaxLength(200)
  seed: string;
}

/** The fields of the Telegram login widget, as it sends them. */
export class TelegramLoginRequest {
  @ApiProperty({ example: 123456789 })
  @IsInt()
  @Min(1)
  @Max(Number.MAX_SAFE_INTEGER)
  id: number;

  @ApiProperty()
  @IsString()
  @MaxLength(256)
  first_name: string;

  @ApiPropertyOptional()
  @IsOptional()
  @IsString()
  @MaxLength(256)
  last_name?: string;

  @ApiPropertyOptional()
  @IsOptional()
  @IsString()
  @MaxLength(64)
  username?: string;

  @ApiPropertyOptional()
  @IsOptional()
  @IsString()
  @MaxLength(2048)
  photo_url?: string;

  @ApiProperty({ description: 'Unix time of the login' })
  @IsInt()
  @Min(0)
  @Max(Number.MAX_SAFE_INTEGER)
  auth_date: number;

  @ApiProperty({ description: 'hex HMAC-SHA-256 of the data-check-string' })
  @IsString()
  @Matches(/^[0-9a-fA-F]{64}$/, { message: 'must be 64 hex characters' })
  hash: string;
}

export class PollLoginCodeRequest {
  @ApiProperty()
  @IsString()
  @IsNotEmpty()
  @MaxLength(200)
  poll_secret: string;
}

export class ExchangeRequest {
  @ApiProperty()
  @IsString()
  @IsNotEmpty()
  @MaxLength(200)
  bootstrap_token: string;
}

export class AdminLoginRequest {
  @ApiProperty({ example: 'alice' })
  @IsString()
  @IsNotEmpty()
  @MaxLength(64)
  username: string;

  @ApiProperty({ format: 'password' })
  @IsString()
  @IsNotEmpty()
  @MaxLength(256)
  password: string;

  @ApiPropertyOptional({
    example: '123456',
    description: 'the authenticator code, for an account with a second factor',
  })
  @IsOptional()
  @IsString()
  @Matches(TOTP_CODE, { message: 'must be the six digits the app shows' })
  totp_code?: string;

  @ApiPropertyOptional({ example: 'abcde-fgh23', description: 'or one of its recovery codes' })
  @IsOptional()
  @IsString()
  @Matches(RECOVERY_CODE, { message: 'must be a recovery code (xxxxx-xxxxx)' })
  recovery_code?: string;
}

export class UserEnvelope {
  @ApiProperty({ type: UserResponse })
  user: UserResponse;
}

export class SeedLoginResponse extends UserEnvelope {
  @ApiProperty({ description: 'the access JWT, also set as a cookie, for non-browser clients' })
  access_token: string;
}

export class SeedCreatedResponse extends SeedLoginResponse {
  @ApiProperty({ description: 'shown once; only its hash is stored', example: 'k3f9-2m8q-…' })
  seed: string;
}

export class LoginCodeResponse {
  @ApiProperty()
  code: string;

  @ApiProperty({ description: 'sent back when polling; keep it private to the app' })
  poll_secret: string;

  @ApiProperty({ type: String, nullable: true, example: 'https://t.me/my_vpn_bot?start=login_abc' })
  deep_link: string | null;

  @ApiProperty({ format: 'date-time' })
  expires_at: string;

  static from(login: LoginCode): LoginCodeResponse {
    return {
      code: login.code,
      poll_secret: login.pollSecret,
      deep_link: login.deepLink,
      expires_at: login.expiresAt.toISOString(),
    };
  }
}

export class PollLoginCodeResponse {
  @ApiProperty({ enum: ['pending', 'confirmed', 'expired'] })
  status: 'pending' | 'confirmed' | 'expired';

  @ApiPropertyOptional({ description: 'present once, with status confirmed' })
  bootstrap_token?: string;

  static from(poll: LoginCodePoll): PollLoginCodeResponse {
    return poll.bootstrapToken === undefined
      ? { status: poll.status }
      : { status: poll.status, bootstrap_token: poll.bootstrapToken };
  }
}
