import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, Matches } from 'class-validator';

/** A code of the authenticator app: six digits. */
export const TOTP_CODE = /^\d{6}$/;
/** A recovery code as given at enrolment (`xxxxx-xxxxx`), in either case. */
export const RECOVERY_CODE = /^[A-Za-z2-7]{5}-?[A-Za-z2-7]{5}$/;

export class TotpCodeRequest {
  @ApiProperty({ example: '123456', description: 'the six digits the app shows now' })
  @IsString()
  @Matches(TOTP_CODE, { message: 'must be the six digits the app shows' })
  code: string;
}

/** A second factor: a current code, or one of the recovery codes. */
export class SecondFactorRequest {
  @ApiPropertyOptional({ example: '123456' })
  @IsOptional()
  @IsString()
  @Matches(TOTP_CODE, { message: 'must be the six digits the app shows' })
  code?: string;

  @ApiPropertyOptional({ example: 'abcde-fgh23', description: 'one of the recovery codes, once' })
  @IsOptional()
  @IsString()
  @Matches(RECOVERY_CODE, { message: 'must be a recovery code (xxxxx-xxxxx)' })
  recovery_code?: string;
}

export class TotpStatusResponse {
  @ApiProperty() enabled: boolean;
  @ApiProperty() recovery_codes_left: number;
  @ApiProperty({
    description:
      'the operator requires a second factor of every staff account (STAFF_TOTP_REQUIRED): until it is on, only these routes answer',
  })
  required: boolean;
}

export class TotpSetupResponse {
  @ApiProperty({ description: 'base32, for typing into the app; also in the URI' })
  secret: string;
  @ApiProperty({ description: 'otpauth:// URI for the QR code' })
  otpauth_url: string;
}

export class RecoveryCodesResponse {
  @ApiProperty({ type: [String], description: 'each good once; shown only now' })
  recovery_codes: string[];
}
